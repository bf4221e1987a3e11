import { randomUUID } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { RecordScansRequestSchema, type Scan } from "@qrplatform/api/links";
import { oldestScanTime, scansOf, type ScanColumns } from "./scan-columns.js";

const SUFFIX = ".scans";
/** What a batch file that cannot be decoded is renamed to, kept for a person to look at. */
const UNREADABLE_SUFFIX = ".unreadable";

/**
 * A spooled batch: its scans, read when needed (and checked by the reader), and how to forget it once
 * they are stored. A file that is not a RecordScansRequest reads as undefined, once it has been
 * renamed out of the spool (`.unreadable`), so it cannot hold back the batches after it.
 */
interface SpooledBatch {
  read(): Promise<Scan[] | undefined>;
  remove(): Promise<void>;
}

/**
 * Batches that could not be stored yet, kept on disk so a hard kill while Postgres is away loses
 * nothing that was spooled. One file per batch (a RecordScansRequest in protobuf binary), written to a
 * temporary name, synced, then renamed, so a file that exists is whole. Names start with the time, so
 * batches are replayed oldest first.
 */
export class ScanSpool {
  private created: Promise<unknown> | undefined;
  /**
   * The batches on disk this process knows the size of (it wrote or read them), by file: their scans
   * and the time of the oldest. Batches of an earlier run count once they are read, on their replay.
   */
  private readonly known = new Map<string, { scans: number; oldest: number }>();

  constructor(readonly dir: string) {}

  async write(batch: ScanColumns): Promise<void> {
    this.created ??= mkdir(this.dir, { recursive: true, mode: 0o700 }).catch((error: unknown) => {
      this.created = undefined;
      throw error;
    });
    await this.created;
    const name = `${Date.now().toString().padStart(15, "0")}-${randomUUID()}`;
    const temporary = join(this.dir, `${name}.partial`);
    const file = await open(temporary, "w", 0o600);
    try {
      await file.writeFile(toBinary(RecordScansRequestSchema, create(RecordScansRequestSchema, { scans: scansOf(batch) })));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, join(this.dir, name + SUFFIX));
    this.known.set(join(this.dir, name + SUFFIX), { scans: batch.id.length, oldest: oldestScanTime(batch) ?? Date.now() });
  }

  /** Scans on disk, as far as this process knows. */
  get scans(): number {
    let total = 0;
    for (const batch of this.known.values()) total += batch.scans;
    return total;
  }

  /** The time (ms since the epoch) of the oldest scan on disk this process knows of, if any. */
  get oldestScanTime(): number | undefined {
    let oldest: number | undefined;
    for (const batch of this.known.values()) oldest = Math.min(oldest ?? batch.oldest, batch.oldest);
    return oldest;
  }

  /** The spooled batches, oldest first, listed once. */
  async batches(): Promise<SpooledBatch[]> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((name) => name.endsWith(SUFFIX)).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    return names.map((name) => {
      const path = join(this.dir, name);
      return {
        read: async () => {
          const bytes = await readFile(path);
          let scans: Scan[];
          try {
            scans = fromBinary(RecordScansRequestSchema, bytes).scans;
          } catch {
            await rename(path, path.slice(0, -SUFFIX.length) + UNREADABLE_SUFFIX);
            return undefined;
          }
          this.known.set(path, { scans: scans.length, oldest: oldestOf(scans) });
          return scans;
        },
        remove: async () => {
          await rm(path, { force: true });
          this.known.delete(path);
        },
      };
    });
  }
}

/** The time of a batch's oldest scan, in milliseconds since the epoch. */
function oldestOf(scans: readonly Scan[]): number {
  let oldest = Infinity;
  for (const scan of scans) if (scan.scanTime) oldest = Math.min(oldest, timestampMs(scan.scanTime));
  return oldest === Infinity ? Date.now() : oldest;
}
