import { ConfigError } from "./config.js";
import { turnOffAllocationSitePretenuring } from "./heap-tuning.js";
import { PortInUseError, STARTUP_FAILURE_EXIT_CODE } from "./ports.js";
import { startTelemetry } from "./telemetry/sdk.js";

/**
 * The first statement of every process's main: the heap tuning every process runs with, then tracing.
 * One call, so an entry point that starts tracing cannot miss the tuning (a process without it can
 * fall into pretenuring's trap: ADR 0014). Threads of a process call startTelemetry
 * alone: the tuning is the process's.
 *
 * A process that cannot start as configured (a bad variable, a busy port) says why in one line and
 * exits with {@link STARTUP_FAILURE_EXIT_CODE}: the message names what to change, a stack trace would
 * only bury it. Any other error that escapes is printed with its stack and exits 1, as by default.
 */
export function startProcess(options: { service: string }): void {
  turnOffAllocationSitePretenuring();
  startTelemetry(options);
  process.on("uncaughtException", (error) => {
    if (error instanceof ConfigError || error instanceof PortInUseError) {
      process.stderr.write(`${options.service}: ${error.message}\n`);
      process.exit(STARTUP_FAILURE_EXIT_CODE);
    }
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
