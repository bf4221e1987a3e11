import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest, type RequestOptions } from "node:https";
import { isIP } from "node:net";
import { pinnedLookup, resolveAllowedHost, type AddressPolicy, type ResolveHost } from "@qrplatform/platform";

/** How a webhook is sent. */
export interface SendLimits {
  /** The budget for the lookup, the connection and the answer's head and body. */
  timeoutMs: number;
  /** At most this many bytes of the answer are read back; the rest is dropped. */
  maxResponseBytes: number;
  isAllowedAddress: AddressPolicy;
  lookup?: ResolveHost;
}

/** What an attempt came to: the answer's status (2xx is success), or why none came. */
export type SendOutcome = { status: number; excerpt: string } | { error: string };

/**
 * POSTs one webhook. The URL's host must resolve to allowed addresses only (the platform's SSRF rules)
 * and the connection goes to exactly those; redirects are not followed (a 3xx is a failed attempt).
 * Network trouble is returned, never thrown.
 */
export async function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  limits: SendLimits,
): Promise<SendOutcome> {
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const target = new URL(url);
  const addresses = await resolveAllowedHost(target.hostname, {
    lookup: limits.lookup,
    isAllowedAddress: limits.isAllowedAddress,
    deadline,
  });
  if ("refused" in addresses) {
    if (deadline.aborted) return { error: "timed out resolving the host name" };
    return {
      error:
        addresses.refused === "forbidden_address"
          ? "the host resolves to a private, loopback or link-local address"
          : "the host name could not be resolved",
    };
  }
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  const options: RequestOptions = {
    method: "POST",
    host,
    port: target.port,
    path: `${target.pathname}${target.search}`,
    headers: {
      ...headers,
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
      "user-agent": "qr-platform-webhooks",
    },
    lookup: pinnedLookup(addresses),
    // A socket of our own for every request: a pooled one may be connected to another resolution.
    agent: false,
    signal: deadline,
    servername: isIP(host) === 0 ? host : undefined,
  };
  const request = target.protocol === "https:" ? httpsRequest : httpRequest;
  let response: IncomingMessage;
  try {
    response = await new Promise<IncomingMessage>((resolve, reject) =>
      request(options, resolve).on("error", reject).end(body),
    );
  } catch (error) {
    return {
      error: deadline.aborted
        ? `no answer within ${limits.timeoutMs / 1000} s`
        : `could not connect (${(error as NodeJS.ErrnoException).code ?? "error"})`,
    };
  }
  try {
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of response as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= limits.maxResponseBytes) break;
    }
    const excerpt = Buffer.concat(chunks).subarray(0, limits.maxResponseBytes).toString("utf8").slice(0, 200);
    return { status: response.statusCode ?? 0, excerpt };
  } catch {
    // The status is known; a body cut short by the deadline does not change it.
    return { status: response.statusCode ?? 0, excerpt: "" };
  } finally {
    response.destroy();
  }
}
