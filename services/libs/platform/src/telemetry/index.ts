// Tracing: the SDK started from OTEL_* variables, the hot-path sampler, and the platform's own spans
// (HTTP requests, gRPC calls both ways, and work such as scan batches).
export * from "./sdk.js";
export * from "./sampler.js";
export * from "./spans.js";
export * from "./grpc.js";
