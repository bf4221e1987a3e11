// The operator's own instruments, beside the process metrics every qr-platform process serves.
import type { Counter, Gauge, Histogram } from "prom-client";
import type { Metrics } from "@qrplatform/platform";

export interface OperatorMetrics {
  /** Reconciles by result: ok, error (retried with backoff). */
  reconciles: Counter<"result">;
  reconcileSeconds: Histogram;
  /** 1 while this replica holds the lease. */
  leader: Gauge;
  /** When the platform's domains were last listed in full (Unix seconds). */
  lastFullResync: Gauge;
  /** Informer and domain-stream restarts after their watch ended with an error, by source. */
  watchRestarts: Counter<"source">;
  /** Scheduled DomainService calls by action (reverify, check, expire) and result (ok, error, skipped). */
  scheduled: Counter<"action" | "result">;
  /** Serving reports sent to the platform, by result. */
  servingReports: Counter<"result">;
}

export function operatorMetrics(metrics: Metrics): OperatorMetrics {
  return {
    reconciles: metrics.counter({
      name: "qrp_operator_reconciles_total",
      help: "CustomDomain reconciles, by result (ok, error).",
      labelNames: ["result"],
    }),
    reconcileSeconds: metrics.histogram({
      name: "qrp_operator_reconcile_duration_seconds",
      help: "How long one CustomDomain reconcile took.",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
    leader: metrics.gauge({
      name: "qrp_operator_leader",
      help: "1 while this replica holds the leader lease, else 0.",
    }),
    lastFullResync: metrics.gauge({
      name: "qrp_operator_last_full_resync_timestamp_seconds",
      help: "When the platform's domains were last listed in full, in Unix seconds.",
    }),
    watchRestarts: metrics.counter({
      name: "qrp_operator_watch_restarts_total",
      help: "Kubernetes informers and the DomainService stream restarted after they ended, by source.",
      labelNames: ["source"],
    }),
    scheduled: metrics.counter({
      name: "qrp_operator_scheduled_calls_total",
      help: "Scheduled DomainService calls, by action (reverify, check, expire) and result (ok, error, skipped).",
      labelNames: ["action", "result"],
    }),
    servingReports: metrics.counter({
      name: "qrp_operator_serving_reports_total",
      help: "Serving states reported to the platform, by result (ok, error).",
      labelNames: ["result"],
    }),
  };
}
