import { sql, type Kysely } from "kysely";
import type { LinksTables } from "../tables.js";
import type { NewScanRow } from "./scans.table.js";

type Db = Kysely<LinksTables>;

/** The dimensions analytics breaks scans down by, and the scan column each one reads. */
export const DIMENSIONS = {
  country: "country",
  device: "device_type",
  os: "os",
  browser: "browser",
  referrer: "referrer_host",
} as const satisfies Record<string, keyof NewScanRow>;
export type Dimension = keyof typeof DIMENSIONS;

/** A scan as a redirector reports it; the owning account comes from the link. */
export type ScanReport = Omit<NewScanRow, "account_id">;

/**
 * Stores a batch of scans and adds the new ones to every rollup, in one statement (so one transaction):
 * a scan is either stored and counted everywhere, or not at all. Scans whose id is already stored are
 * skipped, so a batch that is sent again (after a timeout, say) changes nothing, and so are scans of
 * links that do not exist (purged since); each scan takes its link's account. Returns how many were
 * new.
 *
 * The batch travels as one array per column and Postgres does the counting: the rows come out of
 * `unnest`, and each rollup is a GROUP BY over the rows that were new. Rollup rows are upserted in key
 * order, so concurrent batches lock them in the same order.
 */
export async function storeScans(db: Db, scans: ScanReport[]): Promise<number> {
  if (scans.length === 0) return 0;
  const column = <K extends keyof ScanReport>(key: K) => scans.map((scan) => scan[key]);
  const result = await sql<{ stored: number }>`
    WITH stored AS (
      INSERT INTO links.scans (id, link_id, account_id, scanned_at, country, device_type, os, browser, referrer_host, visitor_key)
      SELECT batch.id, batch.link_id, link.account_id, batch.scanned_at, batch.country, batch.device_type,
        batch.os, batch.browser, batch.referrer_host, batch.visitor_key
      FROM unnest(
        ${column("id")}::uuid[], ${column("link_id")}::uuid[],
        ${scans.map((scan) => new Date(scan.scanned_at).toISOString())}::timestamptz[],
        ${column("country")}::text[], ${column("device_type")}::text[], ${column("os")}::text[],
        ${column("browser")}::text[], ${column("referrer_host")}::text[], ${column("visitor_key")}::text[]
      ) AS batch (id, link_id, scanned_at, country, device_type, os, browser, referrer_host, visitor_key)
      JOIN links.links AS link ON link.id = batch.link_id
      ON CONFLICT (id) DO NOTHING
      RETURNING *, (scanned_at AT TIME ZONE 'UTC')::date AS day
    ),
    new_visitors AS (
      INSERT INTO links.scan_day_visitors (link_id, day, visitor_key)
      SELECT DISTINCT link_id, day, visitor_key FROM stored ORDER BY 1, 2, 3
      ON CONFLICT DO NOTHING
      RETURNING link_id, day
    ),
    totals AS (
      INSERT INTO links.scan_totals (link_id, account_id, scans)
      SELECT link_id, account_id, count(*) FROM stored GROUP BY 1, 2 ORDER BY 1
      ON CONFLICT (link_id) DO UPDATE SET scans = scan_totals.scans + excluded.scans
    ),
    days AS (
      INSERT INTO links.scan_days (link_id, day, scans, unique_scans)
      SELECT link_id, day, scans, coalesce(visitors, 0)
      FROM (SELECT link_id, day, count(*) AS scans FROM stored GROUP BY 1, 2) AS by_day
      LEFT JOIN (SELECT link_id, day, count(*) AS visitors FROM new_visitors GROUP BY 1, 2) AS by_visitor USING (link_id, day)
      ORDER BY 1, 2
      ON CONFLICT (link_id, day) DO UPDATE
        SET scans = scan_days.scans + excluded.scans, unique_scans = scan_days.unique_scans + excluded.unique_scans
    ),
    dimension_values AS (
      INSERT INTO links.scan_day_values (link_id, day, dimension, value, scans)
      SELECT link_id, day, dimension, value, count(*)
      FROM stored
      CROSS JOIN LATERAL (${sql.join(
        Object.entries(DIMENSIONS).map(([dimension, column]) => sql`SELECT ${dimension}::text, ${sql.ref(column)}`),
        sql` UNION ALL `,
      )}) AS dimensions (dimension, value)
      GROUP BY 1, 2, 3, 4
      ORDER BY 1, 2, 3, 4
      ON CONFLICT (link_id, day, dimension, value) DO UPDATE SET scans = scan_day_values.scans + excluded.scans
    )
    SELECT count(*)::int AS stored FROM stored
  `.execute(db);
  return result.rows[0]!.stored;
}

/** All-time scans of the account's links among `linkIds`; links without scans are absent. */
export async function scanTotals(db: Db, accountId: string, linkIds: string[]): Promise<Map<string, number>> {
  if (linkIds.length === 0) return new Map();
  const rows = await db
    .selectFrom("scan_totals")
    .select(["link_id", "scans"])
    .where("account_id", "=", accountId)
    .where("link_id", "in", linkIds)
    .execute();
  return new Map(rows.map((row) => [row.link_id, row.scans]));
}

/** Whether the link is the account's, deleted or not: its scans stay readable until the code is gone. */
export async function isAccountLink(db: Db, accountId: string, linkId: string): Promise<boolean> {
  const row = await db.selectFrom("links").select("id").where("id", "=", linkId).where("account_id", "=", accountId).executeTakeFirst();
  return row !== undefined;
}

/** A link's scans over the days from `from` to `to` (inclusive, UTC), read from the rollups only. */
export interface ScanSummary {
  daily: { day: string; scans: number; uniqueScans: number }[];
  uniqueScans: number;
  breakdowns: { dimension: string; value: string; scans: number }[];
}

export async function summarizeScans(db: Db, linkId: string, from: string, to: string): Promise<ScanSummary> {
  const [daily, unique, breakdowns] = await Promise.all([
    db
      .selectFrom("scan_days")
      .select([sql<string>`to_char(day, 'YYYY-MM-DD')`.as("day"), "scans", "unique_scans"])
      .where("link_id", "=", linkId)
      .where("day", ">=", from)
      .where("day", "<=", to)
      .orderBy("day")
      .execute(),
    db
      .selectFrom((eb) =>
        eb
          .selectFrom("scan_day_visitors")
          .select("visitor_key")
          .distinct()
          .where("link_id", "=", linkId)
          .where("day", ">=", from)
          .where("day", "<=", to)
          .as("visitors_in_range"),
      )
      .select(sql<number>`count(*)::int`.as("visitors"))
      .executeTakeFirstOrThrow(),
    db
      .selectFrom("scan_day_values")
      .select(["dimension", "value", sql<number>`sum(scans)::bigint`.as("scans")])
      .where("link_id", "=", linkId)
      .where("day", ">=", from)
      .where("day", "<=", to)
      .groupBy(["dimension", "value"])
      .execute(),
  ]);
  return {
    daily: daily.map((row) => ({ day: row.day, scans: row.scans, uniqueScans: row.unique_scans })),
    uniqueScans: unique.visitors,
    breakdowns: breakdowns.map((row) => ({ dimension: row.dimension, value: row.value, scans: Number(row.scans) })),
  };
}
