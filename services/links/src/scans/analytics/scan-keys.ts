import { sql } from "kysely";

// Where a scan lies in the raw tables' partitions, by its time: links.raw_scans by keys of
// milliseconds × 2^20, and links.scan_events (before 20270310T1100_raw_scans) by UUIDv7 ids.

const DAY_MS = 86_400_000;

/** Keys a day of links.raw_scans spans: its milliseconds, each with 2^20 keys, as an SQL literal. */
export const DAY_KEYS = sql.lit(`${BigInt(DAY_MS) << 20n}`);

/**
 * The smallest key of links.raw_scans at a millisecond (milliseconds × 2^20), as decimal text; a time
 * past what 63 bits hold (the year 2248 either way) is clamped to the last or first millisecond they do.
 */
export function firstKeyAt(ms: number): string {
  const clamped = Math.min(Math.max(Math.floor(ms), -(2 ** 43)), 2 ** 43 - 1) || 0;
  return (BigInt(clamped) << 20n).toString();
}

/** The smallest UUIDv7 of a millisecond: the bound of links.scan_events' partition that starts then. */
export function firstScanIdAt(ms: number): string {
  const hex = ms.toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}
