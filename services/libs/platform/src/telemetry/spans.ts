import type { IncomingMessage, ServerResponse } from "node:http";
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
} from "@opentelemetry/api";
import { HOT_PATH_ATTRIBUTE } from "./sampler.js";
import { tracingEnabled } from "./sdk.js";

/** The tracer of every span the platform makes; the process is told apart by its service.name. */
export const tracer = trace.getTracer("@qrplatform/platform");

/**
 * Runs `work` inside a new span, a child of the active one; the span ends when `work` settles and
 * records a thrown error. A `hotPath` span (a scan batch) is always the root of a trace of its own,
 * thinned by the hot-path ratio, whatever context happened to schedule it. With tracing off, `work`
 * simply runs.
 */
export async function withSpan<T>(
  name: string,
  options: { hotPath?: boolean; attributes?: Attributes },
  work: () => Promise<T>,
): Promise<T> {
  if (!tracingEnabled()) return work();
  const attributes = options.hotPath ? { ...options.attributes, [HOT_PATH_ATTRIBUTE]: true } : options.attributes;
  const parent = options.hotPath ? ROOT_CONTEXT : context.active();
  return tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent, async (span) => {
    try {
      return await work();
    } catch (error) {
      recordError(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * The active trace context as W3C fields (`traceparent`, `tracestate`), for work handed to another
 * thread with a message; {@link withSpanFrom} continues the trace there. Empty with tracing off.
 */
export function activeTraceContext(): Record<string, string> {
  const fields: Record<string, string> = {};
  if (tracingEnabled()) propagation.inject(context.active(), fields);
  return fields;
}

/**
 * Runs `work` inside a new span, a child of the span whose context another thread sent
 * (activeTraceContext), so that what `work` does (its SQL statements) joins that thread's trace.
 * Without a context sent (tracing off there, or the trace not sampled), `work` simply runs.
 */
export async function withSpanFrom<T>(
  fields: Record<string, string>,
  name: string,
  work: () => Promise<T>,
): Promise<T> {
  if (!tracingEnabled() || Object.keys(fields).length === 0) return work();
  return context.with(propagation.extract(ROOT_CONTEXT, fields), () => withSpan(name, {}, work));
}

/** Marks a span failed with the error's message, without its stack. */
export function recordError(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** How an HTTP request's span is named and sampled. */
export interface HttpSpanOptions {
  /** The matched route template ("/api/v1/workspaces/:id"), known once the response is sent. */
  route: () => string | undefined;
  /** Short-link redirects: the root is kept only for the hot-path share of traces. */
  hotPath?: boolean;
}

/**
 * Serves one request inside an HTTP SERVER span named `METHOD route`, with the semantic conventions'
 * attributes. Everything the handler starts (gRPC calls, SQL, log lines, and the response's own
 * listeners) runs in the span's context. A trace begins here: a `traceparent` sent by a client on the
 * internet is not trusted, so no caller can force a redirect to be traced.
 */
export function traceHttpRequest(
  req: IncomingMessage,
  res: ServerResponse,
  options: HttpSpanOptions,
  handle: () => void,
): void {
  if (!tracingEnabled()) {
    handle();
    return;
  }
  const path = (req.url ?? "/").split("?", 1)[0]!;
  const attributes: Attributes = { "http.request.method": req.method ?? "GET", "url.path": path, "url.scheme": "http" };
  if (options.hotPath) attributes[HOT_PATH_ATTRIBUTE] = true;
  const span = tracer.startSpan(req.method ?? "GET", { kind: SpanKind.SERVER, attributes }, ROOT_CONTEXT);
  const active = trace.setSpan(ROOT_CONTEXT, span);
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    const route = options.route();
    if (route) {
      span.setAttribute("http.route", route);
      span.updateName(`${req.method} ${route}`);
    }
    span.setAttribute("http.response.status_code", res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    if (!res.writableFinished) span.setAttribute("error.type", "aborted");
    span.end();
  };
  if (span.isRecording()) {
    res.once("finish", end);
    res.once("close", end);
    // Listeners added later (the access log's) run in the request's context too.
    context.bind(active, req);
    context.bind(active, res);
  }
  context.with(active, handle);
}
