// The metrics plumbing every process shares: one registry with get-or-create instruments, gauges read
// on scrape, the /metrics endpoint and METRICS_PORT.
import { describe, expect, it } from "vitest";
import {
  createLogger,
  metricsEnv,
  Metrics,
  noMetrics,
  processMetrics,
  readConfig,
  serveMetrics,
} from "@qrplatform/platform";
import { scrapeMetrics } from "@qrplatform/testing";

describe("metrics", () => {
  it("shares one instrument between the parts of a process that ask for the same name", () => {
    const metrics = new Metrics();
    const first = metrics.counter({ name: "qrp_things_total", help: "Things.", labelNames: ["kind"] });
    const second = metrics.counter({ name: "qrp_things_total", help: "Things.", labelNames: ["kind"] });
    expect(second).toBe(first);
  });

  it("reads gauges on scrape from every part that reports one, and serves them on /metrics", async () => {
    const metrics = processMetrics();
    let buffered = 3;
    metrics.gaugeOnScrape({ name: "qrp_pool", help: "Pools.", labelNames: ["pool"] }, (gauge) =>
      gauge.set({ pool: "a" }, buffered),
    );
    metrics.gaugeOnScrape({ name: "qrp_pool", help: "Pools.", labelNames: ["pool"] }, (gauge) =>
      gauge.set({ pool: "b" }, 7),
    );
    const server = await serveMetrics({
      metrics,
      host: "127.0.0.1",
      port: 0,
      logger: createLogger({ service: "test", level: "silent" }),
    });
    try {
      const url = `http://127.0.0.1:${server.port}/metrics`;
      const first = await scrapeMetrics(url);
      expect([first.value("qrp_pool", { pool: "a" }), first.value("qrp_pool", { pool: "b" })]).toEqual([3, 7]);
      expect(first.names).toContain("nodejs_eventloop_lag_seconds");
      buffered = 5;
      expect((await scrapeMetrics(url)).value("qrp_pool", { pool: "a" })).toBe(5);
      expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it("counts nothing where nobody reads: METRICS_PORT=off and features given no registry", async () => {
    const counter = noMetrics.counter({ name: "qrp_things_total", help: "Things.", labelNames: ["kind"] });
    counter.inc({ kind: "a" });
    noMetrics.histogram({ name: "qrp_time_seconds", help: "Time." }).observe(1);
    noMetrics.gaugeOnScrape({ name: "qrp_level", help: "Level." }, () => {
      throw new Error("never read");
    });
    expect(noMetrics.registry.getMetricsAsArray()).toEqual([]);
    expect((await noMetrics.text()).trim()).toBe("");
  });

  it("reads METRICS_PORT: 9464 by default, any port, or off", () => {
    expect(readConfig(metricsEnv, {}).METRICS_PORT).toBe(9464);
    expect(readConfig(metricsEnv, { METRICS_PORT: "0" }).METRICS_PORT).toBe(0);
    expect(readConfig(metricsEnv, { METRICS_PORT: "9500" }).METRICS_PORT).toBe(9500);
    expect(readConfig(metricsEnv, { METRICS_PORT: "off" }).METRICS_PORT).toBeUndefined();
    expect(() => readConfig(metricsEnv, { METRICS_PORT: "70000" })).toThrow(/METRICS_PORT/);
  });
});
