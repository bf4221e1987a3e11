import { fileURLToPath } from "node:url";

/**
 * qrctl as the tests run it: compiled (dist/qrctl.js, built by the test run's global setup, as the
 * container image ships it), so each of the many runs skips compiling the sources again. The checkout's
 * `bin/qrctl.js`, which runs the sources through tsx for `npx qrctl`, is what the `npm start` test uses.
 */
export const QRCTL_BIN = fileURLToPath(new URL("../../../../dist/qrctl.js", import.meta.url));
