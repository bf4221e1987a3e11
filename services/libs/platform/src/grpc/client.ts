import type { Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { traceClientCalls } from "../telemetry/grpc.js";
import { presentCredential } from "./credentials.js";
import { transportFailuresAsUnavailable } from "./transport-failures.js";

/**
 * A transport to a remote qrplatform service that presents the given internal credential. A call
 * that cannot reach the service, or loses its connection, fails with UNAVAILABLE. Answers are asked
 * for uncompressed: services talk inside one cluster, and gzip costs both ends CPU on every answer over
 * a kilobyte (a page of codes, an image that is compressed already) to save bandwidth nobody is short of.
 *
 * Services speak the Connect protocol to each other, in binary over HTTP/2, on the same port that
 * serves gRPC to everyone else: the same messages, codes, details, metadata and deadlines, but a unary
 * call is one request and one response, with no envelopes and no trailers, and it cost both ends about
 * 40 % less CPU than gRPC (ADR 0015).
 */
export function remoteTransport(options: { baseUrl: string; token: string; timeoutMs?: number }): Transport {
  return createConnectTransport({
    httpVersion: "2",
    useBinaryFormat: true,
    baseUrl: options.baseUrl,
    interceptors: [traceClientCalls(), transportFailuresAsUnavailable(), presentCredential(options.token)],
    defaultTimeoutMs: options.timeoutMs ?? 10_000,
    acceptCompression: [],
  });
}
