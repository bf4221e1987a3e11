import { turnOffAllocationSitePretenuring } from "./heap-tuning.js";
import { startTelemetry } from "./telemetry/sdk.js";

/**
 * The first statement of every process's main: the heap tuning every process runs with, then tracing.
 * One call, so an entry point that starts tracing cannot miss the tuning (a process without it can
 * fall into pretenuring's trap: ADR 0014). Threads of a process call startTelemetry
 * alone: the tuning is the process's.
 */
export function startProcess(options: { service: string }): void {
  turnOffAllocationSitePretenuring();
  startTelemetry(options);
}
