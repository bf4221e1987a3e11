import type { ColumnType } from "kysely";

/** A UTC calendar day, read as "YYYY-MM-DD" text (never as a Date, which would bring a time zone in). */
type Day = ColumnType<string, string, string>;

/**
 * links.raw_scans: every counted scan of the raw window, once, partitioned by day through its key.
 * No raw address: `visitor` is the 64-bit hash of a salted visitor key. One index, unique (link,
 * visitor, key).
 */
export interface RawScansTable {
  /** The link's links.links.number. */
  link: ColumnType<string, string | bigint, never>;
  /** The scan's time in milliseconds × 2^20 plus 20 bits of its id (see storeScans). */
  key: ColumnType<string, string | bigint, never>;
  /** hashtextextended(visitor key, 0). */
  visitor: ColumnType<string, string | bigint, never>;
  /** A links.scan_contexts code. */
  context: ColumnType<string, string | bigint, never>;
}

/** links.scan_contexts: the device type, OS, browser, country and referrer host each context code stands for. */
export interface ScanContextsTable {
  code: ColumnType<string, string | bigint, never>;
  device_type: string;
  os: string;
  browser: string;
  country: string;
  referrer_host: string;
}

/** links.scan_totals: all-time scans per link. */
export interface ScanTotalsTable {
  link_id: string;
  account_id: string;
  scans: number;
}

/**
 * links.scan_link_days: a link's rollups of a UTC day, in one row of bytes (day-encoding.ts): its
 * scans, distinct visitors and scans by value of each dimension (for `rule`, only scans a rule
 * decided: see scans.repository.ts), and once the day is over its HyperLogLog sketch of visitors.
 */
export interface ScanLinkDaysTable {
  link_id: string;
  day: Day;
  /** encodeDayCounts. */
  counts: Uint8Array;
  /** encodeDaySketch; null until the day's sketch is kept. */
  sketch: Uint8Array | null;
}

/**
 * links.scan_values: a code for each value of a dimension the rollups hold, spelled as the
 * dimension's code (DIMENSION_CODES) followed by the value.
 */
export interface ScanValuesTable {
  code: ColumnType<number, never, never>;
  dimension_value: string;
}

/**
 * links.scan_deltas: what batches added to the rollups and no folder has moved there yet, one row per
 * combination of link, day and values a batch saw.
 */
export interface ScanDeltasTable {
  link_id: string;
  account_id: string;
  day: Day;
  country: string;
  device_type: string;
  os: string;
  browser: string;
  referrer_host: string;
  /** The rule that decided the scans: its id, "<rule id>/<variant>" for a split rule, "" when none did. */
  rule: string;
  scans: number;
  /** New visitor-days of the link and day in the row's batch (on one of the batch's rows for them; 0 on the others). */
  visitors: number;
}
