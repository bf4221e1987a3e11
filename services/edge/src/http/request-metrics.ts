import type { Request, RequestHandler, Response } from "express";
import { secondsSince, type Metrics } from "@qrplatform/platform";

/** The label of a request no route matched (a 404, a probe, a scanner's guess): never the raw path. */
export const UNMATCHED_ROUTE = "unmatched";

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** Buckets of API requests: from a cached read to an export of a large image. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Counts and times every request as `http_server_request_duration_seconds{method, route, status_code}`
 * (OpenTelemetry's HTTP server metric, in seconds): its `_count` is the request rate, the 5xx share the
 * error ratio. `route` is the matched route's template (`/api/v1/workspaces/:workspaceId`), read when the
 * response ends; a request no route matched gets {@link UNMATCHED_ROUTE}, and an unusual method `_OTHER`,
 * so no label takes a value a client chose.
 */
export function requestMetrics(metrics: Metrics): RequestHandler {
  const duration = metrics.histogram({
    name: "http_server_request_duration_seconds",
    help: "Time the edge took to answer an HTTP request, in seconds, by method, route template and status code.",
    labelNames: ["method", "route", "status_code"],
    buckets: REQUEST_BUCKETS,
  });
  return (req, res, next) => {
    const startedAt = performance.now();
    res.once("finish", () => {
      if (res.locals.shortLink === true) return;
      duration.observe(
        {
          method: KNOWN_METHODS.has(req.method) ? req.method : "_OTHER",
          route: routeTemplateOf(req, res),
          status_code: String(res.statusCode),
        },
        secondsSince(startedAt),
      );
    });
    next();
  };
}

/**
 * Remembers the path a router is mounted on, for routers whose routes may end in the error handler:
 * Express keeps `req.route` when a handler fails, but `req.baseUrl` is back to the app's by then.
 */
export function rememberRouteMount(): RequestHandler {
  return (req, res, next) => {
    res.locals.routeMount = req.baseUrl;
    next();
  };
}

/** The matched route's template with its mount path, or {@link UNMATCHED_ROUTE}. */
export function routeTemplateOf(req: Request, res: Response): string {
  const path: unknown = req.route?.path;
  if (typeof path !== "string") return UNMATCHED_ROUTE;
  const mount = typeof res.locals.routeMount === "string" ? res.locals.routeMount : req.baseUrl;
  return `${mount}${path}`;
}
