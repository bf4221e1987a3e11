import type { Logger } from "pino";
import { shutdownTelemetry } from "./telemetry/sdk.js";

/**
 * Runs `stop` once on the first SIGTERM or SIGINT, exports the spans still buffered, then exits. A second signal exits at once, so an
 * operator is never stuck behind a hung drain.
 */
export function onShutdownSignal(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, "second signal during shutdown; exiting now");
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, "shutting down");
    stop()
      .then(shutdownTelemetry)
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, "shutdown failed");
          process.exit(1);
        },
      );
  };
  process.on("SIGTERM", handle);
  process.on("SIGINT", handle);
}
