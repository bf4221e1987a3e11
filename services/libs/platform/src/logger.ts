import { trace, TraceFlags } from "@opentelemetry/api";
import { pino, type DestinationStream, type Logger } from "pino";

export type { Logger } from "pino";

/** Paths that must never reach a log line: credentials in headers and bodies. */
const REDACTED_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  "headers.authorization",
  "secret",
  "*.secret",
  "key",
  "*.key",
  "token",
  "*.token",
];

/** The ids that tie a line to its trace: those of the active span, when that span is sampled. */
function traceIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  return traceFlags & TraceFlags.SAMPLED ? { trace_id: traceId, span_id: spanId } : {};
}

/**
 * Creates the structured JSON logger of one process; every line carries the service name, and a line
 * written inside a traced request its `trace_id` and `span_id`. Lines go to stdout unless
 * `destination` says otherwise.
 */
export function createLogger(options: { service: string; level?: string; destination?: DestinationStream }): Logger {
  const settings = {
    level: options.level ?? "info",
    base: { service: options.service },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: traceIds,
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
