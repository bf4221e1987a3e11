import type { Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { traceClientCalls } from "../telemetry/grpc.js";
import { presentCredential } from "./credentials.js";
import { transportFailuresAsUnavailable } from "./transport-failures.js";

/**
 * A gRPC transport to a remote qrplatform service that presents the given internal credential. A call
 * that cannot reach the service, or loses its connection, fails with UNAVAILABLE. Answers are asked
 * for uncompressed: services talk inside one cluster, and gzip cost both ends CPU on every answer over
 * a kilobyte (a page of codes, an image that is compressed already) to save bandwidth nobody is short of.
 */
export function remoteTransport(options: { baseUrl: string; token: string; timeoutMs?: number }): Transport {
  return createGrpcTransport({
    baseUrl: options.baseUrl,
    interceptors: [traceClientCalls(), transportFailuresAsUnavailable(), presentCredential(options.token)],
    defaultTimeoutMs: options.timeoutMs ?? 10_000,
    acceptCompression: [],
  });
}
