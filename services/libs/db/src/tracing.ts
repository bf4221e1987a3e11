import { SpanKind, trace } from "@opentelemetry/api";
import { recordError } from "@qrplatform/platform";
import type { LogEvent } from "kysely";

const tracer = trace.getTracer("@qrplatform/db");

/** The operation of a statement kysely built, whatever it starts with (a WITH clause, say); raw SQL is named by its first word. */
const OPERATIONS: Record<string, string> = {
  SelectQueryNode: "SELECT",
  InsertQueryNode: "INSERT",
  UpdateQueryNode: "UPDATE",
  DeleteQueryNode: "DELETE",
  MergeQueryNode: "MERGE",
};

/**
 * Kysely's query hook, turned into one CLIENT span per SQL statement (with the semantic conventions'
 * `db.*` attributes, the statement's text but never its parameters) under the active span. Kysely
 * calls it once the statement has finished, for Postgres and PGlite alike; the span is back-dated by
 * the statement's duration. A statement outside a sampled span (a readiness probe, a migration, a
 * request that was not sampled) makes no span, so with tracing off this costs one context lookup.
 */
export function traceQuery(event: LogEvent): void {
  if (!trace.getActiveSpan()?.isRecording()) return;
  const endTime = performance.timeOrigin + performance.now();
  const text = event.query.sql;
  const operation = OPERATIONS[event.query.query.kind] ?? /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? "SQL";
  const span = tracer.startSpan(operation, {
    kind: SpanKind.CLIENT,
    startTime: endTime - event.queryDurationMillis,
    attributes: {
      "db.system": "postgresql",
      "db.system.name": "postgresql",
      "db.operation.name": operation,
      "db.query.text": text,
    },
  });
  if (event.level === "error") recordError(span, event.error);
  span.end(endTime);
}
