import type { Kysely } from "kysely";
import type { LinksTables } from "../../tables.js";
import { foldScanDeltas, vacuumScanDeltas } from "./scan-fold.js";

/** How long deltas wait before a fold: batches stored meanwhile are folded together, into one upsert per rollup row. */
const FOLD_DELAY_MS = 1000;
/** Deltas folded between two vacuums of links.scan_deltas: a few seconds of a busy stream of scans. */
const VACUUM_AFTER_FOLDED = 50_000;

/**
 * Folds links.scan_deltas into the rollups shortly after scans are stored (see foldScanDeltas). At
 * most one fold runs in a process, and the advisory lock keeps it to one across processes; when
 * another process holds it, or it failed (the database restarting), the fold is tried again after
 * the delay, because folding also writes the scans' webhook events (`link.scanned` in the outbox).
 * Readers add the deltas themselves, so analytics count nothing late because a fold is late. Once
 * its folds have deleted enough deltas, it vacuums the table they leave (vacuumScanDeltas). Its
 * timer never keeps a process alive.
 */
export class DeltaFolder {
  private timer: NodeJS.Timeout | undefined;
  private folding: Promise<void> | undefined;
  private closed = false;
  private foldedSinceVacuum = 0;

  constructor(
    private readonly db: Kysely<LinksTables>,
    private readonly delayMs = FOLD_DELAY_MS,
    private readonly vacuumAfterFolded = VACUUM_AFTER_FOLDED,
  ) {}

  /** Asks for a fold within the delay; calls meanwhile share it. */
  foldSoon(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setTimeout(() => {
      void this.foldNow().then((outcome) => {
        this.timer = undefined;
        if (outcome === "locked" || outcome === "failed") this.foldSoon();
      });
    }, this.delayMs);
    this.timer.unref();
  }

  /** Folds now (after a fold in progress): the deltas folded, "locked" when another folder was at it, "failed" when the database refused. */
  async foldNow(): Promise<number | "locked" | "failed"> {
    while (this.folding) await this.folding;
    let outcome: number | "locked" | "failed" = "failed";
    this.folding = foldScanDeltas(this.db).then(
      async (folded) => {
        outcome = folded ?? "locked";
        this.foldedSinceVacuum += folded ?? 0;
        if (this.foldedSinceVacuum < this.vacuumAfterFolded) return;
        this.foldedSinceVacuum = 0;
        // Autovacuum stays the backstop: a vacuum that fails (the database restarting) waits for the next count.
        await vacuumScanDeltas(this.db).catch(() => undefined);
      },
      () => {
        outcome = "failed";
      },
    );
    await this.folding;
    this.folding = undefined;
    return outcome;
  }

  /** Stops folding; what is not folded stays in scan_deltas, counted by readers, for the next fold of any process. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.folding;
  }
}
