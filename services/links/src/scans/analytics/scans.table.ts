import type { ColumnType } from "kysely";

/** A UTC calendar day, read as "YYYY-MM-DD" text (never as a Date, which would bring a time zone in). */
type Day = ColumnType<string, string, string>;

/**
 * links.scan_events: the raw scans stored before 20270310T1100_raw_scans, kept until their partitions
 * age out; every counted scan of then, once, partitioned by day through its id (a
 * UUIDv7, whose first 48 bits are the scan's time). The link knows the account. No raw address:
 * `visitor` is the 64-bit hash of a salted visitor key.
 */
export interface ScanEventsTable {
  id: string;
  link_id: string;
  /** hashtextextended(visitor key, 0). */
  visitor: ColumnType<string, string | bigint, never>;
  /** hashtextextended of (device type, OS, browser) as a row: a links.scan_agents code. */
  agent: ColumnType<string, string | bigint, never>;
  /** ISO 3166-1 alpha-2, or "" when unknown. */
  country: string;
  /** "" when the scan had no referrer. */
  referrer_host: string;
}

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

/** links.scan_agents: the device type, OS and browser each agent code of links.scan_events stands for. */
export interface ScanAgentsTable {
  code: ColumnType<string, string | bigint, never>;
  device_type: string;
  os: string;
  browser: string;
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

/** links.scan_visitor_days: the visitors of a link on a day, by the 64-bit hash of their key. */
export interface ScanVisitorDaysTable {
  link_id: string;
  day: Day;
  visitor: ColumnType<string, string | bigint, never>;
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
