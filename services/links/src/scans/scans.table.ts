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
