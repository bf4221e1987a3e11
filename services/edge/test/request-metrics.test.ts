// The edge's request metrics take bounded labels only: a route's template, never the raw path.
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Metrics } from "@qrplatform/platform";
import { rememberRouteMount, requestMetrics, UNMATCHED_ROUTE } from "../src/http/request-metrics.js";

describe("request metrics", () => {
  const metrics = new Metrics();
  let server: ReturnType<express.Express["listen"]>;
  let base: string;

  beforeAll(async () => {
    const app = express();
    app.use(requestMetrics(metrics));
    const api = express.Router();
    api.use(rememberRouteMount());
    api.get("/things/:thingId", (_req, res) => void res.json({}));
    api.get("/failing/:thingId", () => {
      throw new Error("boom");
    });
    app.use("/api/v1", api);
    app.get("/healthz", (_req, res) => void res.end());
    app.use((_req, res) => void res.status(404).end());
    app.use(
      (_error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) =>
        void res.status(500).end(),
    );
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const series = async () => {
    const { values } = await metrics.registry.getSingleMetric("http_server_request_duration_seconds")!.get();
    // A histogram's values are its buckets, sum and count, told apart by metricName.
    return (values as { metricName?: string; labels: Record<string, string | number>; value: number }[])
      .filter((v) => v.metricName === "http_server_request_duration_seconds_count")
      .map((v): Record<string, string | number> => ({ ...v.labels, count: v.value }));
  };

  it("labels a matched request with its route template and mount, an unknown path with a fixed label", async () => {
    await fetch(`${base}/api/v1/things/123e4567-e89b-12d3-a456-426614174000`);
    await fetch(`${base}/api/v1/things/other-id`);
    await fetch(`${base}/api/v1/failing/abc`);
    await fetch(`${base}/healthz`);
    await fetch(`${base}/wp-admin/setup.php?id=42`);
    await fetch(`${base}/api/v1/nothing/here`);
    await fetch(`${base}/api/v1/things/1`, { method: "PROPFIND" });

    const seen = await series();
    expect(seen).toEqual(
      expect.arrayContaining([
        { method: "GET", route: "/api/v1/things/:thingId", status_code: "200", count: 2 },
        // A failing handler still has its route, mount included, though the error handler answered.
        { method: "GET", route: "/api/v1/failing/:thingId", status_code: "500", count: 1 },
        { method: "GET", route: "/healthz", status_code: "200", count: 1 },
        { method: "GET", route: UNMATCHED_ROUTE, status_code: "404", count: 2 },
        { method: "_OTHER", route: UNMATCHED_ROUTE, status_code: "404", count: 1 },
      ]),
    );
    expect(seen).toHaveLength(5);
    const routes = seen.map((labels) => String(labels.route));
    expect(routes.filter((route) => /123e4567|other-id|wp-admin|nothing/.test(route))).toEqual([]);
  });
});
