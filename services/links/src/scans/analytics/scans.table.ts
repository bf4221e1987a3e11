import type { ColumnType, Insertable } from "kysely";

/** A UTC calendar day, read as "YYYY-MM-DD" text (never as a Date, which would bring a time zone in). */
type Day = ColumnType<string, string, string>;

/** links.scans: every counted scan, once. No raw address: visitor_key is a salted hash. */
export interface ScansTable {
  id: string;
  link_id: string;
  account_id: string;
  scanned_at: Date;
  /** ISO 3166-1 alpha-2, or "" when unknown. */
  country: string;
  device_type: string;
  os: string;
  browser: string;
  /** "" when the scan had no referrer. */
  referrer_host: string;
  visitor_key: string;
}

export type NewScanRow = Insertable<ScansTable>;

/** links.scan_totals: all-time scans per link. */
export interface ScanTotalsTable {
  link_id: string;
  account_id: string;
  scans: number;
}

/** links.scan_days: scans and distinct visitors per link and UTC day. */
export interface ScanDaysTable {
  link_id: string;
  day: Day;
  scans: number;
  unique_scans: number;
}

/** links.scan_day_values: scans per link, UTC day and value of one dimension. */
export interface ScanDayValuesTable {
  link_id: string;
  day: Day;
  dimension: string;
  value: string;
  scans: number;
}

/** links.scan_day_visitors: the visitors of a link on a day. */
export interface ScanDayVisitorsTable {
  link_id: string;
  day: Day;
  visitor_key: string;
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
  scans: number;
  /** New visitor-days of the link and day in the row's batch (on one of the batch's rows for them; 0 on the others). */
  visitors: number;
}

/** links.scan_day_sketches: a HyperLogLog sketch of a link's visitors on a day that is over (see visitor-sketch.ts). */
export interface ScanDaySketchesTable {
  link_id: string;
  day: Day;
  /** The day's distinct visitors when the sketch was built; the sketch is current while scan_days says the same. */
  visitors: number;
  registers: Uint8Array;
}
