import { create } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { z } from "zod";
import { ScanSchema, type Scan } from "@qrplatform/api/links";
import { canonicalId, isUuid, uuidSchema, validate } from "@qrplatform/platform";

// Scans as the storing statement takes them, one array per column: a RecordScans batch checked
// against the scan rules and turned into columns (scanColumnsOf), columns turned back into a batch
// (scansOf), batches joined for one statement (joinScanColumns) or cut (sliceScanColumns).

/**
 * A batch of scans as one array per column, the shape the storing statement takes them in: built as
 * a recorder classifies its redirects (or once from a RecordScans request), joined with the batches
 * beside it, sent as one array per column. The owning account is not among them: it comes from the link.
 */
export interface ScanColumns {
  id: string[];
  linkId: string[];
  /** When each scan was made, in Unix milliseconds. */
  scannedAtMs: number[];
  /** ISO 3166-1 alpha-2, or "" when unknown. */
  country: string[];
  deviceType: string[];
  os: string[];
  browser: string[];
  /** "" when the scan had no referrer. */
  referrerHost: string[];
  visitorKey: string[];
  /** The routing rule that decided each scan, canonical; "" when none did. */
  ruleId: string[];
  /** The variant of a split rule each scan was sent to, 0 to 3; NO_VARIANT when none. */
  variant: number[];
}

/** A scan's `variant` when no split rule decided it. */
export const NO_VARIANT = -1;

export function emptyScanColumns(): ScanColumns {
  return {
    id: [],
    linkId: [],
    scannedAtMs: [],
    country: [],
    deviceType: [],
    os: [],
    browser: [],
    referrerHost: [],
    visitorKey: [],
    ruleId: [],
    variant: [],
  };
}

/** The columns' names, in the order a batch holds them. */
export const SCAN_COLUMNS = Object.keys(emptyScanColumns()) as (keyof ScanColumns)[];

/** Scans `start` to `end` (not included) of a batch, as a batch of their own. */
export function sliceScanColumns(columns: ScanColumns, start: number, end: number): ScanColumns {
  const slice = emptyScanColumns();
  for (const key of SCAN_COLUMNS) (slice[key] as unknown[]) = columns[key].slice(start, end);
  return slice;
}

/** Forgets the first `count` scans of a batch (ones stored or spooled). */
export function dropFirstScans(columns: ScanColumns, count: number): void {
  for (const key of SCAN_COLUMNS) columns[key].splice(0, count);
}

/** When the batch's oldest scan was made, in Unix milliseconds; undefined for an empty batch. */
export function oldestScanTime(columns: ScanColumns): number | undefined {
  let oldest: number | undefined;
  for (const at of columns.scannedAtMs) if (oldest === undefined || at < oldest) oldest = at;
  return oldest;
}

/** The batch as RecordScans carries it (to another process, or to the spool on disk). */
export function scansOf(columns: ScanColumns): Scan[] {
  return columns.id.map((id, i) =>
    create(ScanSchema, {
      id,
      linkId: columns.linkId[i]!,
      scanTime: timestampFromMs(columns.scannedAtMs[i]!),
      country: columns.country[i]!,
      deviceType: columns.deviceType[i]!,
      os: columns.os[i]!,
      browser: columns.browser[i]!,
      referrerHost: columns.referrerHost[i]!,
      visitorKey: columns.visitorKey[i]!,
      ruleId: columns.ruleId[i]!,
      ...(columns.variant[i]! !== NO_VARIANT && { variant: columns.variant[i]! }),
    }),
  );
}

/** The batches one after another, as one batch. */
export function joinScanColumns(batches: readonly ScanColumns[]): ScanColumns {
  if (batches.length === 1) return batches[0]!;
  const joined = emptyScanColumns();
  for (const batch of batches) {
    for (const key of SCAN_COLUMNS) {
      const column = joined[key] as unknown[];
      for (const value of batch[key]) column.push(value);
    }
  }
  return joined;
}

/** The most scans one RecordScans call may carry. */
export const MAX_SCANS_PER_BATCH = 5000;

/** What every scan of a RecordScans batch must be; refusals name the scan's field. */
const scanSchema = z
  .object({
    id: uuidSchema,
    linkId: uuidSchema,
    scanTime: z.date(),
    country: z.string().regex(/^([A-Z]{2})?$/, "must be an ISO 3166-1 alpha-2 code or empty"),
    deviceType: z.enum(["mobile", "tablet", "desktop", "other"]),
    os: z.string().max(64),
    browser: z.string().max(64),
    referrerHost: z.string().max(253),
    visitorKey: z.string().min(1).max(64),
    ruleId: z.string().refine((id) => id === "" || isUuid(id), {
      message: "must be a rule's id (a UUID) or empty",
      params: { reason: "invalid_format" },
    }),
    variant: z.number().int().min(0).max(3).optional(),
  })
  .refine((scan) => scan.variant === undefined || scan.ruleId !== "", {
    message: "must be unset when no rule decided the scan",
    path: ["variant"],
  });
export const batchSchema = z.array(scanSchema).max(MAX_SCANS_PER_BATCH);

/**
 * The batch as the statement takes it, one array per column, once every scan passes scanSchema. A
 * batch that {@link plainlyValid} accepts is certain to pass it and skips zod, whose per-scan cost would
 * be the largest part of the links process's work per stored scan; any other batch meets zod, which
 * names each problem.
 */
export function scanColumnsOf(scans: Scan[]): ScanColumns {
  const columns = emptyScanColumns();
  for (const scan of scans) {
    columns.id.push(canonicalId(scan.id));
    columns.linkId.push(canonicalId(scan.linkId));
    columns.scannedAtMs.push(scan.scanTime ? timestampMs(scan.scanTime) : Number.NaN);
    columns.country.push(scan.country);
    columns.deviceType.push(scan.deviceType);
    columns.os.push(scan.os);
    columns.browser.push(scan.browser);
    columns.referrerHost.push(scan.referrerHost);
    columns.visitorKey.push(scan.visitorKey);
    columns.ruleId.push(isUuid(scan.ruleId) ? canonicalId(scan.ruleId) : scan.ruleId);
    columns.variant.push(scan.variant ?? NO_VARIANT);
  }
  requireScanRules(columns);
  return columns;
}

/**
 * Columns that come from outside the process as columns (a spooled batch read back from the disk,
 * which an older version or a hand may have left), checked against the same rules as
 * {@link scanColumnsOf}: the batch itself when every scan passes, ids in canonical form.
 */
export function checkedScanColumns(columns: ScanColumns): ScanColumns {
  requireScanRules(columns);
  return {
    ...columns,
    id: columns.id.map(canonicalId),
    linkId: columns.linkId.map(canonicalId),
    ruleId: columns.ruleId.map((id) => (id === "" ? id : canonicalId(id))),
  };
}

/** Throws (zod naming each problem) unless every scan passes scanSchema; a time of NaN is a missing one. */
function requireScanRules(columns: ScanColumns): void {
  if (plainlyValid(columns)) return;
  validate(
    batchSchema,
    columns.id.map((id, i) => ({
      id,
      linkId: columns.linkId[i],
      scanTime: Number.isNaN(columns.scannedAtMs[i]) ? undefined : new Date(columns.scannedAtMs[i]!),
      country: columns.country[i],
      deviceType: columns.deviceType[i],
      os: columns.os[i],
      browser: columns.browser[i],
      referrerHost: columns.referrerHost[i],
      visitorKey: columns.visitorKey[i],
      ruleId: columns.ruleId[i],
      variant: columns.variant[i] === NO_VARIANT ? undefined : columns.variant[i],
    })),
  );
}

const DEVICE_TYPES: ReadonlySet<string> = new Set(["mobile", "tablet", "desktop", "other"]);
const VARIANTS: ReadonlySet<number> = new Set([0, 1, 2, 3]);
const isCountry = (value: string) => value === "" || /^[A-Z]{2}$/.test(value);

/** Whether every scan passes scanSchema by plain comparisons only; false sends the batch to zod for its problems. */
export function plainlyValid(columns: ScanColumns): boolean {
  const { id, linkId, scannedAtMs, country, deviceType, os, browser, referrerHost, visitorKey, ruleId, variant } =
    columns;
  if (id.length > MAX_SCANS_PER_BATCH) return false;
  for (let i = 0; i < id.length; i++) {
    // A time a Date holds (NaN fails too).
    if (!isUuid(id[i]!) || !isUuid(linkId[i]!) || !(Math.abs(scannedAtMs[i]!) <= 8.64e15)) return false;
    if (!isCountry(country[i]!) || !DEVICE_TYPES.has(deviceType[i]!)) return false;
    if (os[i]!.length > 64 || browser[i]!.length > 64 || referrerHost[i]!.length > 253) return false;
    if (visitorKey[i]!.length < 1 || visitorKey[i]!.length > 64) return false;
    const rule = ruleId[i]!;
    const split = variant[i]!;
    if (rule === "" ? split !== NO_VARIANT : !isUuid(rule) || !(split === NO_VARIANT || VARIANTS.has(split)))
      return false;
  }
  return true;
}
