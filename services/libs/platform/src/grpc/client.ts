import type { Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { presentCredential } from "./credentials.js";

/** A gRPC transport to a remote qrplatform service that presents the given internal credential. */
export function remoteTransport(options: { baseUrl: string; token: string; timeoutMs?: number }): Transport {
  return createGrpcTransport({
    baseUrl: options.baseUrl,
    interceptors: [presentCredential(options.token)],
    defaultTimeoutMs: options.timeoutMs ?? 10_000,
  });
}
