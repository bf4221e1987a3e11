import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { observeCall } from "../grpc/call-outcome.js";
import { secondsSince, type Metrics } from "./metrics.js";

// The names and labels of grpc-ecosystem/go-grpc-prometheus (and its successor in go-grpc-middleware),
// the ones the common gRPC dashboards and alerts query: grpc_server_started_total,
// grpc_server_handled_total{grpc_code} and grpc_server_handling_seconds, each with grpc_type,
// grpc_service and grpc_method. Services and methods come from the schema, so they are bounded.

const GRPC_TYPES = {
  unary: "unary",
  server_streaming: "server_stream",
  client_streaming: "client_stream",
  bidi_streaming: "bidi_stream",
} as const;

/** Buckets of RPC durations: from a cached lookup (sub-millisecond) to an export or a slow query. */
const RPC_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A server-side interceptor counting every RPC by service, method and code, and timing it. */
export function rpcMetrics(metrics: Metrics): Interceptor {
  const labels = ["grpc_type", "grpc_service", "grpc_method"] as const;
  const started = metrics.counter({
    name: "grpc_server_started_total",
    help: "RPCs started on the server.",
    labelNames: labels,
  });
  const handled = metrics.counter({
    name: "grpc_server_handled_total",
    help: "RPCs completed on the server, whatever their outcome.",
    labelNames: [...labels, "grpc_code"],
  });
  const handling = metrics.histogram({
    name: "grpc_server_handling_seconds",
    help: "Time the server took to answer an RPC, in seconds.",
    labelNames: labels,
    buckets: RPC_BUCKETS,
  });
  return (next) => (req) => {
    const rpc = {
      grpc_type: GRPC_TYPES[req.method.methodKind],
      grpc_service: req.service.typeName,
      grpc_method: req.method.name,
    };
    const startedAt = performance.now();
    started.inc(rpc);
    // A stream is handled when it ends, as go-grpc-prometheus counts it.
    return observeCall(() => next(req), req.signal, {
      settled(error) {
        // Connect's names of the codes are Go's, as grpc_code takes them.
        const code = error === undefined ? "OK" : (Code[ConnectError.from(error).code] ?? "Unknown");
        handled.inc({ ...rpc, grpc_code: code });
        handling.observe(rpc, secondsSince(startedAt));
      },
    });
  };
}
