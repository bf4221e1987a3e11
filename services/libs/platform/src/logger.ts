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

/** Creates the structured JSON logger of one process; every line carries the service name. Lines go to stdout unless `destination` says otherwise. */
export function createLogger(options: { service: string; level?: string; destination?: DestinationStream }): Logger {
  const settings = {
    level: options.level ?? "info",
    base: { service: options.service },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
