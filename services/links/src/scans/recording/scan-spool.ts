import { randomUUID } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { RecordScansRequestSchema, type Scan } from "@qrplatform/api/links";
import {
  checkedScanColumns,
  NO_VARIANT,
  oldestScanTime,
  SCAN_COLUMNS,
  scanColumnsOf,
  type ScanColumns,
} from "../scan-columns.js";

/** A batch as this version writes it: the batch's columns as JSON. */
const SUFFIX = ".json";
/** A batch as earlier versions wrote it, a RecordScansRequest in protobuf binary: still replayed. */
const PROTOBUF_SUFFIX = ".scans";
/** What a batch file that cannot be decoded is renamed to, kept for a person to look at. */
const UNREADABLE_SUFFIX = ".unreadable";

/**
 * A spooled batch read back: how many scans it holds, and its columns once checked against the scan
 * rules (which throws, as RecordScans refuses, when one breaks them).
 */
export interface SpooledScans {
  count: number;
  columns(): ScanColumns;
}

/**
 * A spooled batch, read when needed, and how to forget it once its scans are stored. A file that is
 * not a batch reads as null, once it has been renamed out of the spool (`.unreadable`), so it cannot
 * hold back the batches after it.
 */
interface SpooledBatch {
  read(): Promise<SpooledScans | null>;
  remove(): Promise<void>;
}

/**
 * Batches that could not be stored yet, kept on disk so a hard kill while Postgres is away loses
 * nothing that was spooled. One file per batch, written to a temporary name, synced, then renamed, so
 * a file that exists is whole. Names start with the time, so batches are replayed oldest first. A file
 * holds the batch's columns as JSON, which costs the thread that records scans about a third of the
 * CPU of a RecordScansRequest in protobuf binary to write and read back (ADR 0014); files of protobuf
 * binary (`*.scans`, an earlier version's) are still read.
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
      await file.writeFile(JSON.stringify(batch));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, join(this.dir, name + SUFFIX));
    this.known.set(join(this.dir, name + SUFFIX), {
      scans: batch.id.length,
      oldest: oldestScanTime(batch) ?? Date.now(),
    });
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

  /** The spooled batches, oldest first (whichever version wrote them), listed once. */
  async batches(): Promise<SpooledBatch[]> {
    let names: string[];
    try {
      names = (await readdir(this.dir))
        .filter((name) => name.endsWith(SUFFIX) || name.endsWith(PROTOBUF_SUFFIX))
        .sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    return names.map((name) => {
      const path = join(this.dir, name);
      return {
        read: async () => {
          const bytes = await readFile(path);
          const scans = name.endsWith(SUFFIX) ? decodeColumns(bytes) : decodeRecordScansRequest(bytes);
          if (scans === undefined) {
            await rename(path, path.slice(0, path.lastIndexOf(".")) + UNREADABLE_SUFFIX);
            return null;
          }
          this.known.set(path, { scans: scans.count, oldest: scans.oldest });
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

type DecodedBatch = SpooledScans & { oldest: number };

/**
 * A batch this version wrote: eleven arrays of one length, of strings (numbers for the times and
 * variants), or an earlier one's nine without the routing decision; anything else is unreadable.
 */
function decodeColumns(bytes: Buffer): DecodedBatch | undefined {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const columns = value as Record<keyof ScanColumns, unknown>;
  const count = Array.isArray(columns.id) ? columns.id.length : -1;
  // A batch spooled before scans carried their routing decision: no rule decided any of its scans.
  if (columns.ruleId === undefined && columns.variant === undefined && count >= 0) {
    columns.ruleId = new Array(count).fill("");
    columns.variant = new Array(count).fill(NO_VARIANT);
  }
  for (const key of SCAN_COLUMNS) {
    const column = columns[key];
    const type = key === "scannedAtMs" || key === "variant" ? "number" : "string";
    if (!Array.isArray(column) || column.length !== count || !column.every((item) => typeof item === type))
      return undefined;
  }
  const batch = columns as ScanColumns;
  return { count, oldest: oldestScanTime(batch) ?? Date.now(), columns: () => checkedScanColumns(batch) };
}

/** A batch an earlier version wrote, a RecordScansRequest in protobuf binary. */
function decodeRecordScansRequest(bytes: Buffer): DecodedBatch | undefined {
  let scans: Scan[];
  try {
    scans = fromBinary(RecordScansRequestSchema, bytes).scans;
  } catch {
    return undefined;
  }
  return { count: scans.length, oldest: oldestOf(scans), columns: () => scanColumnsOf(scans) };
}

/** The time of a batch's oldest scan, in milliseconds since the epoch. */
function oldestOf(scans: readonly Scan[]): number {
  let oldest = Infinity;
  for (const scan of scans) if (scan.scanTime) oldest = Math.min(oldest, timestampMs(scan.scanTime));
  return oldest === Infinity ? Date.now() : oldest;
}
