// vitest's global setup: compiles the processes once per run, so that the tests that start the
// platform as separate processes run the compiled dist/ files, as the container image does; and makes
// the empty PGlite cluster every in-memory test database starts from; and builds the console when its
// sources changed, as `npm start` does, for the edge's console tests and the browser suite.
import { buildConsole } from "@qrplatform/console/build";
import { prepareEmptyPgliteArchive } from "@qrplatform/db/testing";
import { buildAll } from "./build.js";

export default async function setup(): Promise<void> {
  await Promise.all([buildAll(), prepareEmptyPgliteArchive(), buildConsole()]);
}
