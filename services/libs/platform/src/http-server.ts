import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";

/** A listening HTTP/1.1 server. */
export interface HttpServer {
  /** The port it listens on, useful when it was started on port 0. */
  readonly port: number;
  /** Stops accepting connections, lets in-flight requests finish, then resolves. */
  close(): Promise<void>;
}

/**
 * Serves a request listener (an Express app, say) with graceful close: idle keep-alive connections are
 * closed at once, busy ones after their current response, so in-flight requests always finish.
 */
export async function listenHttp(options: {
  handler: http.RequestListener;
  host: string;
  port: number;
  logger: Logger;
  name: string;
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
  // A client that never finishes its headers must not pin a connection forever.
  server.headersTimeout = 30_000;
  server.requestTimeout = 120_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ host: options.host, port }, `${options.name} listening`);
  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        closing = true;
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      }),
  };
}
