import type { Kysely } from "kysely";
import type { LinksTables } from "../../tables.js";
import { joinScanColumns, type ScanColumns } from "../scan-columns.js";
import type { ScanSink } from "../scan-sink.js";
import { storeScans } from "./scan-store.js";

/** The most scans stored in one statement; a larger backlog takes several. */
const MAX_SCANS_PER_STATEMENT = 10_000;

interface Waiting {
  scans: ScanColumns;
  resolve(stored: number): void;
  reject(error: unknown): void;
}

/**
 * Stores the batches one links instance receives one statement at a time: batches that arrive while a
 * statement runs wait and go together in the next, so batches sent in parallel (several redirectors
 * calling one instance) cost one transaction and one commit between them instead of competing for
 * the database's cores and its log. Each caller learns how many of its own scans were new, once its
 * statement has committed; a failed statement fails every batch in it, and each is sent again.
 */
export class ScanWriter implements ScanSink {
  private readonly waiting: Waiting[] = [];
  private writing = false;

  /** Scans not stored because they were made outside the raw window (see storeScans). */
  expired = 0;

  constructor(
    private readonly db: Kysely<LinksTables>,
    private readonly onExpired: (scans: number) => void = () => {},
  ) {}

  /** Stores the batch (with whatever waits beside it); resolves to how many of its scans were new. */
  store(scans: ScanColumns): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ scans, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.length > 0) {
        const group: Waiting[] = [];
        let scans = 0;
        while (
          this.waiting.length > 0 &&
          (group.length === 0 || scans + this.waiting[0]!.scans.id.length <= MAX_SCANS_PER_STATEMENT)
        ) {
          const next = this.waiting.shift()!;
          group.push(next);
          scans += next.scans.id.length;
        }
        try {
          const stored = await storeScans(this.db, joinScanColumns(group.map((batch) => batch.scans)), (scans) => {
            this.expired += scans;
            this.onExpired(scans);
          });
          for (const batch of group) {
            // A scan sent twice at once (a retry overtaking its first send) is new to the first batch only.
            batch.resolve(
              stored === undefined ? batch.scans.id.length : batch.scans.id.filter((id) => stored.delete(id)).length,
            );
          }
        } catch (error) {
          for (const batch of group) batch.reject(error);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
