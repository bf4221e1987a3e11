// @qrplatform/platform: what every qrplatform process shares: configuration, logging, the error model,
// page tokens, graceful shutdown, tracing, metrics, and hosting or calling gRPC services.
export * from "./config.js";
export * from "./logger.js";
export * from "./errors.js";
export * from "./connection-errors.js";
export * from "./enums.js";
export * from "./validation.js";
export * from "./page-token.js";
export * from "./shutdown.js";
export * from "./http-server.js";
export * from "./late-handler.js";
export * from "./grpc/credentials.js";
export * from "./grpc/health.js";
export * from "./grpc/readiness.js";
export * from "./grpc/reflection.js";
export * from "./grpc/server.js";
export * from "./grpc/request-checks.js";
export * from "./grpc/client.js";
export * from "./grpc/transport-failures.js";
export * from "./grpc/process.js";
export * from "./slug.js";
export * from "./change-bus.js";
export * from "./access-changes.js";
export * from "./telemetry/index.js";
export * from "./metrics/metrics.js";
export * from "./metrics/metrics-server.js";
export * from "./metrics/rpc-metrics.js";
