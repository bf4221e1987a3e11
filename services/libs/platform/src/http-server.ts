import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { listenOn } from "./ports.js";

/** A listening HTTP/1.1 server. */
export interface HttpServer {
  /** The port it listens on, useful when it was started on port 0. */
  readonly port: number;
  /**
   * Stops accepting connections, lets in-flight requests finish for up to the close grace, then ends
   * every connection still open and resolves.
   */
  close(): Promise<void>;
}

/**
 * How long an idle keep-alive connection stays open. Longer than the idle time of the clients and
 * load balancers in front of us (Node's fetch keeps a socket 4 s, most balancers 60 s), so the server
 * never closes a connection at the moment a client reuses it: that race reads as ECONNRESET on the client.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * How long close() waits for connections that are still open: busy ones finishing their response,
 * and those that are neither busy nor idle (a request whose body was never read, headers that never
 * ended), which nothing else would close before the keep-alive or headers timeout.
 */
export const CLOSE_GRACE_MS = 5_000;

/**
 * Serves a request listener (an Express app, say) with graceful close: idle keep-alive connections are
 * closed at once, busy ones after their current response, and whatever is still open after the close
 * grace is ended, so a close never waits on a client.
 */
export async function listenHttp(options: {
  handler: http.RequestListener;
  host: string;
  port: number;
  logger: Logger;
  name: string;
  /** The variable that chooses the port, named when it is taken; PORT by default. */
  portVariable?: string;
  /** How long close() lets open connections finish before it ends them; {@link CLOSE_GRACE_MS} by default. */
  closeGraceMs?: number;
}): Promise<HttpServer> {
  let closing = false;
  const server = http.createServer((req, res) => {
    if (closing) {
      // Responses started during the drain end their connection, so nothing is left idle to wait on.
      res.setHeader("Connection", "close");
    }
    res.on("finish", () => {
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
    options.handler(req, res);
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // A client that never finishes its headers must not pin a connection forever.
  server.headersTimeout = 30_000;
  server.requestTimeout = 120_000;
  await listenOn(server, { host: options.host, port: options.port, variable: options.portVariable ?? "PORT" });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ host: options.host, port }, `${options.name} listening`);
  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        closing = true;
        const endTheRest = setTimeout(() => server.closeAllConnections(), options.closeGraceMs ?? CLOSE_GRACE_MS);
        server.close((error) => {
          clearTimeout(endTheRest);
          if (error) reject(error);
          else resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
