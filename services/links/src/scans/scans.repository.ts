import { sql, type Kysely } from "kysely";
import type { LinksTables } from "../tables.js";
import type { NewScanRow } from "./scans.table.js";
import { RANK_SQL, REGISTER_SQL } from "./visitor-sketch.js";

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
 * Stores a batch of scans and what they add to the rollups, in one statement (so one transaction): a
 * scan is either stored and counted everywhere, or not at all. Scans whose id is already stored are
 * skipped, so a batch that is sent again (after a timeout, say) changes nothing, and so are scans of
 * links that do not exist (purged since); each scan takes its link's account. Returns how many were
 * new.
 *
 * The batch travels as one array per column and Postgres does the counting: the rows come out of
 * `unnest`, and the batch's additions to the rollups, grouped by link, day and value, are appended to
 * links.scan_deltas. Nothing here updates a row another batch may hold, so batches stored at once
 * (several redirectors, several links instances) never wait on each other; {@link foldScanDeltas}
 * moves the deltas into the rollups later, one folder at a time. Answers the ids of the new scans.
 */
export async function storeScans(db: Db, scans: ScanReport[]): Promise<Set<string>> {
  if (scans.length === 0) return new Set();
  const column = <K extends keyof ScanReport>(key: K) => scans.map((scan) => scan[key]);
  const result = await sql<{ id: string }>`
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
      SELECT DISTINCT link_id, day, visitor_key FROM stored
      ON CONFLICT DO NOTHING
      RETURNING link_id, day
    ),
    deltas AS (
      INSERT INTO links.scan_deltas (link_id, account_id, day, dimension, value, scans, visitors)
      SELECT by_day.link_id, account_id, by_day.day, '', '', scans, coalesce(visitors, 0)
      FROM (SELECT link_id, account_id, day, count(*) AS scans FROM stored GROUP BY 1, 2, 3) AS by_day
      LEFT JOIN (SELECT link_id, day, count(*) AS visitors FROM new_visitors GROUP BY 1, 2) AS by_visitor USING (link_id, day)
      UNION ALL
      SELECT link_id, account_id, day, dimension, value, count(*), 0
      FROM stored
      CROSS JOIN LATERAL (${sql.join(
        Object.entries(DIMENSIONS).map(([dimension, column]) => sql`SELECT ${dimension}::text, ${sql.ref(column)}`),
        sql` UNION ALL `,
      )}) AS dimensions (dimension, value)
      GROUP BY 1, 2, 3, 4, 5
    )
    SELECT id FROM stored
  `.execute(db);
  return new Set(result.rows.map((row) => row.id));
}

/** Any number that is ours alone: the advisory lock only one folder holds at a time, across every links instance. */
const FOLD_LOCK = 0x71720001;

/**
 * Moves every committed delta into the rollups, in one transaction: deleted from links.scan_deltas
 * and added to scan_totals, scan_days and scan_day_values together, so a reader that adds rollups and
 * deltas in one statement counts each scan once, before, during and after. Only one folder runs at a
 * time (an advisory lock; a second one returns at once), so the rollup rows have one writer and
 * never wait. Returns the deltas folded, or undefined when another folder holds the lock.
 */
export async function foldScanDeltas(db: Db): Promise<number | undefined> {
  return db.transaction().execute(async (trx) => {
    const { rows: locked } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${FOLD_LOCK}) AS locked`.execute(trx);
    if (!locked[0]!.locked) return undefined;
    const { rows } = await sql<{ folded: number }>`
      WITH folded AS (
        DELETE FROM links.scan_deltas RETURNING *
      ),
      totals AS (
        INSERT INTO links.scan_totals (link_id, account_id, scans)
        SELECT link_id, account_id, sum(scans) FROM folded WHERE dimension = '' GROUP BY 1, 2
        ON CONFLICT (link_id) DO UPDATE SET scans = scan_totals.scans + excluded.scans
      ),
      days AS (
        INSERT INTO links.scan_days (link_id, day, scans, unique_scans)
        SELECT link_id, day, sum(scans), sum(visitors) FROM folded WHERE dimension = '' GROUP BY 1, 2
        ON CONFLICT (link_id, day) DO UPDATE
          SET scans = scan_days.scans + excluded.scans, unique_scans = scan_days.unique_scans + excluded.unique_scans
      ),
      dimension_values AS (
        INSERT INTO links.scan_day_values (link_id, day, dimension, value, scans)
        SELECT link_id, day, dimension, value, sum(scans) FROM folded WHERE dimension <> '' GROUP BY 1, 2, 3, 4
        ON CONFLICT (link_id, day, dimension, value) DO UPDATE SET scans = scan_day_values.scans + excluded.scans
      )
      SELECT count(*)::int AS folded FROM folded
    `.execute(trx);
    return rows[0]!.folded;
  });
}

/** All-time scans of the account's links among `linkIds`, folded or not; links without scans are absent. */
export async function scanTotals(db: Db, accountId: string, linkIds: string[]): Promise<Map<string, number>> {
  if (linkIds.length === 0) return new Map();
  // One statement, one snapshot: a fold committing meanwhile moves scans from one side to the other.
  const { rows } = await sql<{ link_id: string; scans: number }>`
    SELECT link_id, sum(scans)::bigint AS scans FROM (
      SELECT link_id, scans FROM links.scan_totals WHERE account_id = ${accountId} AND link_id = ANY(${linkIds}::uuid[])
      UNION ALL
      SELECT link_id, scans FROM links.scan_deltas WHERE dimension = '' AND account_id = ${accountId} AND link_id = ANY(${linkIds}::uuid[])
    ) AS all_scans
    GROUP BY link_id`.execute(db);
  return new Map(rows.map((row) => [row.link_id, Number(row.scans)]));
}

/** Whether the link is the account's, deleted or not: its scans stay readable until the code is gone. */
export async function isAccountLink(db: Db, accountId: string, linkId: string): Promise<boolean> {
  const row = await db.selectFrom("links").select("id").where("id", "=", linkId).where("account_id", "=", accountId).executeTakeFirst();
  return row !== undefined;
}

/** A link's scans over the days from `from` to `to` (inclusive, UTC), read from the rollups and the deltas not folded yet. */
export interface ScanSummary {
  daily: { day: string; scans: number; uniqueScans: number }[];
  breakdowns: { dimension: string; value: string; scans: number }[];
}

export async function summarizeScans(db: Db, linkId: string, from: string, to: string): Promise<ScanSummary> {
  const [daily, breakdowns] = await Promise.all([
    sql<{ day: string; scans: number; unique_scans: number }>`
      SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(scans)::bigint AS scans, sum(unique_scans)::bigint AS unique_scans FROM (
        SELECT day, scans, unique_scans FROM links.scan_days WHERE link_id = ${linkId} AND day BETWEEN ${from} AND ${to}
        UNION ALL
        SELECT day, scans, visitors FROM links.scan_deltas WHERE link_id = ${linkId} AND dimension = '' AND day BETWEEN ${from} AND ${to}
      ) AS days
      GROUP BY day ORDER BY day`.execute(db),
    sql<{ dimension: string; value: string; scans: number }>`
      SELECT dimension, value, sum(scans)::bigint AS scans FROM (
        SELECT dimension, value, scans FROM links.scan_day_values WHERE link_id = ${linkId} AND day BETWEEN ${from} AND ${to}
        UNION ALL
        SELECT dimension, value, scans FROM links.scan_deltas WHERE link_id = ${linkId} AND dimension <> '' AND day BETWEEN ${from} AND ${to}
      ) AS values_in_range
      GROUP BY 1, 2`.execute(db),
  ]);
  return {
    daily: daily.rows.map((row) => ({ day: row.day, scans: Number(row.scans), uniqueScans: Number(row.unique_scans) })),
    breakdowns: breakdowns.rows.map((row) => ({ dimension: row.dimension, value: row.value, scans: Number(row.scans) })),
  };
}

/**
 * The distinct visitors of a link over the days from `from` to `to`, counted exactly from its rows
 * of visitors and days, provided there are at most `limit` of them; undefined when there are more.
 */
export async function countVisitorsUpTo(db: Db, linkId: string, from: string, to: string, limit: number): Promise<number | undefined> {
  const { rows } = await sql<{ rows: number; visitors: number }>`
    SELECT count(*)::int AS rows, count(DISTINCT visitor_key)::int AS visitors FROM (
      SELECT visitor_key FROM links.scan_day_visitors WHERE link_id = ${linkId} AND day BETWEEN ${from} AND ${to} LIMIT ${limit + 1}
    ) AS visitor_days`.execute(db);
  return rows[0]!.rows > limit ? undefined : rows[0]!.visitors;
}

/** The stored sketches of a link's days in a range, with the distinct visitors each had when it was built. */
export async function daySketches(db: Db, linkId: string, from: string, to: string): Promise<Map<string, { visitors: number; registers: Uint8Array }>> {
  const rows = await db
    .selectFrom("scan_day_sketches")
    .select([sql<string>`to_char(day, 'YYYY-MM-DD')`.as("day"), "visitors", "registers"])
    .where("link_id", "=", linkId)
    .where("day", ">=", from)
    .where("day", "<=", to)
    .execute();
  return new Map(rows.map((row) => [row.day, { visitors: Number(row.visitors), registers: new Uint8Array(row.registers) }]));
}

/** Each visitor's register and rank on the given days, reduced to the highest rank per day and register. */
export async function dayRegisters(db: Db, linkId: string, days: string[]): Promise<{ day: string; register: number; rank: number }[]> {
  if (days.length === 0) return [];
  const { rows } = await sql<{ day: string; register: number; rank: number }>`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, register, max(rank)::int AS rank FROM (
      SELECT day, ${sql.raw(REGISTER_SQL)} AS register, ${sql.raw(RANK_SQL)} AS rank
      FROM links.scan_day_visitors WHERE link_id = ${linkId} AND day = ANY(${days}::date[])
    ) AS ranked
    GROUP BY 1, 2`.execute(db);
  return rows;
}

/** Keeps the sketches of days that are over, so the next range that spans them reads 4 KiB a day. */
export async function saveDaySketches(db: Db, linkId: string, sketches: { day: string; visitors: number; registers: Uint8Array }[]): Promise<void> {
  if (sketches.length === 0) return;
  await db
    .insertInto("scan_day_sketches")
    .values(sketches.map(({ day, visitors, registers }) => ({ link_id: linkId, day, visitors, registers: Buffer.from(registers) })))
    .onConflict((oc) =>
      oc.columns(["link_id", "day"]).doUpdateSet((eb) => ({ visitors: eb.ref("excluded.visitors"), registers: eb.ref("excluded.registers") })),
    )
    .execute();
}
