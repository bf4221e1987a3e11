// The metric names the processes export, read from the embedded platform's /metrics (every service and
// the edge in one registry), so the chart's alerts and dashboard can be checked against the code.
import { registerPoolMetrics } from "@qrplatform/db";
import { Metrics } from "@qrplatform/platform";
import { scrapeMetrics } from "@qrplatform/testing";
import { startScratchPlatform } from "@qrplatform/embedded/testing";

/** Every metric family the platform registers, the Postgres pool's included (PGlite has no pool). */
export async function exportedMetricNames(): Promise<ReadonlySet<string>> {
  const platform = await startScratchPlatform();
  try {
    const names = new Set((await scrapeMetrics(platform.metricsUrl!)).names);
    const pool = new Metrics();
    registerPoolMetrics(pool, { poolConnections: () => ({ total: 0, idle: 0, waiting: 0 }) } as unknown as Parameters<
      typeof registerPoolMetrics
    >[1]);
    for (const metric of pool.registry.getMetricsAsArray()) names.add(metric.name);
    return names;
  } finally {
    await platform.close();
  }
}
