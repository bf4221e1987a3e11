import type { RequestListener } from "node:http";
import { z } from "zod";
import type { Logger } from "pino";
import { listenHttp, type HttpServer } from "../http-server.js";
import type { Metrics } from "./metrics.js";

/** Where Prometheus scrapes by default: the port OpenTelemetry's Prometheus exporter uses too. */
const DEFAULT_METRICS_PORT = 9464;

/**
 * METRICS_PORT: the port `/metrics` answers on (9464 by default), `0` for any free port (it is
 * logged), or `off` to serve none, for several processes on one machine that nobody scrapes.
 */
export const metricsPortVar = () =>
  z
    .union([z.literal("off"), z.coerce.number().int().min(0).max(65535)])
    .default(DEFAULT_METRICS_PORT)
    .transform((value) => (value === "off" ? undefined : value));

/** The environment of every process's metrics endpoint. */
export const metricsEnv = z.object({
  METRICS_HOST: z.string().default("0.0.0.0"),
  METRICS_PORT: metricsPortVar(),
});

/**
 * Serves `GET /metrics` in the Prometheus text format on a port of its own, so scraping never queues
 * behind the API, and the port can stay inside the cluster while the API is public.
 */
export async function serveMetrics(options: {
  metrics: Metrics;
  host: string;
  port: number;
  logger: Logger;
}): Promise<HttpServer> {
  const { metrics, logger } = options;
  const handler: RequestListener = (req, res) => {
    const path = (req.url ?? "").split("?", 1)[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res
        .writeHead(404, { "Content-Type": "text/plain; charset=utf-8" })
        .end("Not found: metrics are at GET /metrics\n");
      return;
    }
    metrics.text().then(
      (body) => res.writeHead(200, { "Content-Type": metrics.contentType, "Cache-Control": "no-store" }).end(body),
      (error: unknown) => {
        logger.error({ err: error }, "could not collect metrics");
        res.writeHead(500, { "Content-Type": "text/plain; charset=utf-8" }).end("could not collect metrics\n");
      },
    );
  };
  return listenHttp({
    handler,
    host: options.host,
    port: options.port,
    logger,
    name: "metrics on /metrics",
    portVariable: "METRICS_PORT",
  });
}
