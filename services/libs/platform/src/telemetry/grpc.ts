import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type TextMapGetter,
  type TextMapSetter,
} from "@opentelemetry/api";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { observeCall } from "../grpc/call-outcome.js";
import { tracingEnabled } from "./sdk.js";
import { tracer } from "./spans.js";

/** Probes and tooling, called all the time: not worth a trace. */
const UNTRACED_SERVICES = new Set([
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
]);

/** Codes that are the server's fault, so its span is an error (the semantic conventions' list). */
const SERVER_FAULTS = new Set([
  Code.Unknown,
  Code.DeadlineExceeded,
  Code.Unimplemented,
  Code.Internal,
  Code.Unavailable,
  Code.DataLoss,
]);

const headerSetter: TextMapSetter<Headers> = { set: (headers, key, value) => headers.set(key, value) };
const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/**
 * Client side of a traced call: a CLIENT span for the RPC, a child of the active span, whose W3C trace
 * context (`traceparent`, `tracestate`) travels in the request's metadata, over the network or through
 * the in-process transport alike. A call made outside any span (a background job) starts no trace here;
 * the server side decides. A streamed call's span lasts until its last message has been read.
 */
export function traceClientCalls(): Interceptor {
  return (next) => (req) => {
    if (!tracingEnabled() || UNTRACED_SERVICES.has(req.service.typeName) || !trace.getActiveSpan()) return next(req);
    const span = tracer.startSpan(`${req.service.typeName}/${req.method.name}`, {
      kind: SpanKind.CLIENT,
      attributes: { "rpc.system": "grpc", "rpc.service": req.service.typeName, "rpc.method": req.method.name },
    });
    const active = trace.setSpan(context.active(), span);
    propagation.inject(active, req.header, headerSetter);
    return observeCall(() => next(req), req.signal, {
      run: (step) => context.with(active, step),
      settled(error) {
        const code = error === undefined ? 0 : ConnectError.from(error).code; // 0: OK
        span.setAttribute("rpc.grpc.status_code", code);
        if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: Code[code] });
        span.end();
      },
    });
  };
}

/**
 * Server side of a traced call: a SERVER span whose parent is the caller's span, taken from the
 * request's `traceparent` (or the active context, in-process); everything the handler does, SQL
 * statements and log lines included, runs inside it; for a streamed response, until its last message.
 */
export function traceServerCalls(): Interceptor {
  return (next) => (req) => {
    if (!tracingEnabled() || UNTRACED_SERVICES.has(req.service.typeName)) return next(req);
    const parent = propagation.extract(context.active(), req.header, headerGetter);
    const span = tracer.startSpan(
      `${req.service.typeName}/${req.method.name}`,
      {
        kind: SpanKind.SERVER,
        attributes: { "rpc.system": "grpc", "rpc.service": req.service.typeName, "rpc.method": req.method.name },
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    return observeCall(() => next(req), req.signal, {
      run: (step) => context.with(active, step),
      settled(error) {
        const code = error === undefined ? undefined : ConnectError.from(error).code;
        span.setAttribute("rpc.grpc.status_code", code ?? 0); // 0: OK
        if (code !== undefined && SERVER_FAULTS.has(code))
          span.setStatus({ code: SpanStatusCode.ERROR, message: Code[code] });
        span.end();
      },
    });
  };
}
