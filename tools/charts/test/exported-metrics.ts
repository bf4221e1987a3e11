// The metric names the processes export, read from the embedded platform's /metrics (every service and
// the edge in one registry), so the chart's alerts and dashboard can be checked against the code.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { registerPoolMetrics } from "@qrplatform/db";
import { createLogger, Metrics } from "@qrplatform/platform";
import { scrapeMetrics } from "@qrplatform/platform/testing";
import { startPlatform } from "../../../services/embedded/src/platform.ts";

/** Every metric family the platform registers, the Postgres pool's included (PGlite has no pool). */
export async function exportedMetricNames(): Promise<ReadonlySet<string>> {
  const dataDir = mkdtempSync(join(tmpdir(), "qrp-metric-names-"));
  const platform = await startPlatform({
    dataDir,
    host: "127.0.0.1",
    port: 0,
    grpcHost: "127.0.0.1",
    grpcPort: 0,
    metricsPort: 0,
    logger: createLogger({ service: "test", level: "silent" }),
  });
  try {
    const names = new Set((await scrapeMetrics(platform.metricsUrl!)).names);
    const pool = new Metrics();
    registerPoolMetrics(pool, { poolConnections: () => ({ total: 0, idle: 0, waiting: 0 }) } as unknown as Parameters<typeof registerPoolMetrics>[1]);
    for (const metric of pool.registry.getMetricsAsArray()) names.add(metric.name);
    return names;
  } finally {
    await platform.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
