import type { Metrics } from "@qrplatform/platform";
import type { Database } from "./database.js";

/**
 * Reports the Postgres pool on each scrape as `qrp_db_pool_connections{state}`: `busy` and `idle`
 * connections and queries `waiting` for one, read from pg.Pool's own counts. A pool that is always
 * full with queries waiting is what makes calls time out after 3 s; PGlite has no pool and reports nothing.
 */
export function registerPoolMetrics(metrics: Metrics, database: Database): void {
  const connections = database.poolConnections;
  if (!connections) return;
  metrics.gaugeOnScrape(
    {
      name: "qrp_db_pool_connections",
      help: "Postgres pool connections by state (busy, idle) and queries waiting for one.",
      labelNames: ["state"],
    },
    (gauge) => {
      const { total, idle, waiting } = connections();
      gauge.set({ state: "busy" }, total - idle);
      gauge.set({ state: "idle" }, idle);
      gauge.set({ state: "waiting" }, waiting);
    },
  );
}
