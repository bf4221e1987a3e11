// HEALTH_PORT: GET /healthz (the process answers: liveness) and GET /readyz (the caches are filled:
// informers synced and the platform's domains listed once). Leader and standby are both ready.
import type { RequestListener } from "node:http";
import { listenHttp, type HttpServer, type Logger } from "@qrplatform/platform";

/** What /readyz reports. */
export interface Readiness {
  ready: boolean;
  /** What it still waits for, when not ready. */
  waitingFor: string[];
}

export function healthHandler(readiness: () => Readiness): RequestListener {
  return (req, res) => {
    const path = (req.url ?? "").split("?", 1)[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res
        .writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain; charset=utf-8" })
        .end("Method not allowed\n");
      return;
    }
    if (path === "/healthz") {
      res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" }).end("ok\n");
      return;
    }
    if (path === "/readyz") {
      const state = readiness();
      res
        .writeHead(state.ready ? 200 : 503, { "Content-Type": "application/json", "Cache-Control": "no-store" })
        .end(`${JSON.stringify(state)}\n`);
      return;
    }
    res
      .writeHead(404, { "Content-Type": "text/plain; charset=utf-8" })
      .end("Not found: health is at GET /healthz and GET /readyz\n");
  };
}

export function serveHealth(options: {
  readiness: () => Readiness;
  host: string;
  port: number;
  logger: Logger;
}): Promise<HttpServer> {
  return listenHttp({
    handler: healthHandler(options.readiness),
    host: options.host,
    port: options.port,
    logger: options.logger,
    name: "health on /healthz and /readyz",
  });
}
