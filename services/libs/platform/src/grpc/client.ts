import type { Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { traceClientCalls } from "../telemetry/grpc.js";
import { presentCredential } from "./credentials.js";
import { transportFailuresAsUnavailable } from "./transport-failures.js";

/**
 * A gRPC transport to a remote qrplatform service that presents the given internal credential. A call
 * that cannot reach the service, or loses its connection, fails with UNAVAILABLE.
 */
export function remoteTransport(options: { baseUrl: string; token: string; timeoutMs?: number }): Transport {
  return createGrpcTransport({
    baseUrl: options.baseUrl,
    interceptors: [traceClientCalls(), transportFailuresAsUnavailable(), presentCredential(options.token)],
    defaultTimeoutMs: options.timeoutMs ?? 10_000,
  });
}
