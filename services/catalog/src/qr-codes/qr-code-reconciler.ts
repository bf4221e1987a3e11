import { noMetrics, PeriodicPass, type Metrics } from "@qrplatform/platform";
import type { Counter } from "prom-client";
import type { CatalogDeps } from "../deps.js";
import { finishDelete, syncFromLink, undoCreate } from "./link-consistency.js";
import * as qrCodes from "./qr-codes.repository.js";

/** How the reconciler paces itself. */
export interface ReconcilerOptions {
  /** How long an operation may stay pending before it is taken for abandoned; well above the longest create. */
  graceMs: number;
  /** How often to look for abandoned operations. */
  intervalMs: number;
}

export const DEFAULT_RECONCILER_OPTIONS: ReconcilerOptions = { graceMs: 60_000, intervalMs: 15_000 };

/** What one pass repaired. */
export interface ReconcileReport {
  /** Creates that never finished: link purged (if made) and the place in capacity freed. */
  createsUndone: number;
  /** Updates whose outcome was unknown: the code now shows what its link does. */
  updatesSettled: number;
  /** Deletes that stopped halfway, finished; and codes whose link had vanished, removed. */
  deletesFinished: number;
  /** Rows that could not be repaired this time (the links service unreachable, say); retried next pass. */
  failed: number;
}

const BATCH = 100;

/** The `repair` label of each count in a report: a fixed set, whatever the rows were. */
const REPAIR_LABELS: Record<keyof ReconcileReport, string> = {
  createsUndone: "create_undone",
  updatesSettled: "update_settled",
  deletesFinished: "delete_finished",
  failed: "failed",
};

/**
 * Finds what a crash (of the catalog, of the links service, or of the network between them) left
 * behind, and repairs it: every code and link change is recorded as pending before the link is
 * touched, so whatever stopped halfway is a row here. Runs every interval on every catalog replica;
 * claiming a row moves its pending_since, so replicas never repair the same row at once.
 */
export class QrCodeReconciler {
  private readonly schedule: PeriodicPass;
  private readonly repairs: Counter<"repair">;
  private readonly passes: Counter<"result">;

  constructor(
    private readonly deps: CatalogDeps,
    private readonly options: ReconcilerOptions = DEFAULT_RECONCILER_OPTIONS,
    metrics: Metrics = noMetrics,
  ) {
    // Repairs are rare; a rising count means processes crash or the links service is unreachable mid-change.
    this.repairs = metrics.counter({
      name: "qrp_reconcile_repairs_total",
      help: "QR-code changes left unfinished by a crash that the reconciler repaired (or failed to repair), by repair.",
      labelNames: ["repair"],
    });
    this.passes = metrics.counter({
      name: "qrp_reconcile_passes_total",
      help: "Reconciler passes, by result (ok, error).",
      labelNames: ["result"],
    });
    this.schedule = new PeriodicPass(
      () => this.runOnce().then(() => this.passes.inc({ result: "ok" })),
      this.options.intervalMs,
      (error) => {
        this.passes.inc({ result: "error" });
        deps.logger.warn({ err: error }, "QR-code reconciliation pass failed; retrying next interval");
      },
    );
  }

  /** Starts the periodic passes; the first runs at once, which repairs what a crash before this start left. */
  start(): void {
    this.schedule.start();
  }

  /** Stops the passes, waiting for one under way. */
  stop(): Promise<void> {
    return this.schedule.stop();
  }

  /** One pass over every operation pending for longer than the grace period. */
  async runOnce(): Promise<ReconcileReport> {
    const report: ReconcileReport = { createsUndone: 0, updatesSettled: 0, deletesFinished: 0, failed: 0 };
    for (;;) {
      const now = this.deps.now();
      const claimed = await qrCodes.claimStalePending(
        this.deps.db,
        new Date(now.getTime() - this.options.graceMs),
        now,
        BATCH,
      );
      for (const code of claimed) {
        try {
          if (code.pending_operation === "create") {
            if (await undoCreate(this.deps, code, true)) report.createsUndone++;
          } else if (code.pending_operation === "delete") {
            await finishDelete(this.deps, code);
            report.deletesFinished++;
          } else if ((await syncFromLink(this.deps, code, now)) === "synced") {
            report.updatesSettled++;
          } else {
            report.deletesFinished++;
          }
        } catch (error) {
          report.failed++;
          this.deps.logger.warn(
            { err: error, qrCodeId: code.id, operation: code.pending_operation },
            "could not repair a pending QR-code operation",
          );
        }
      }
      if (claimed.length < BATCH) break;
    }
    for (const key of Object.keys(report) as (keyof ReconcileReport)[]) {
      if (report[key] > 0) this.repairs.inc({ repair: REPAIR_LABELS[key] }, report[key]);
    }
    if (report.createsUndone + report.updatesSettled + report.deletesFinished + report.failed > 0) {
      this.deps.logger.info({ ...report }, "reconciled QR codes with their links");
    }
    return report;
  }
}
