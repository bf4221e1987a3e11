import { sql, type Kysely, type Transaction } from "kysely";
import type { LinksTables } from "../tables.js";
import type { NewScanRow } from "./scans.table.js";

type Db = Kysely<LinksTables>;
type Trx = Transaction<LinksTables>;

/** The dimensions analytics breaks scans down by, and the scan column each one reads. */
export const DIMENSIONS = {
  country: "country",
  device: "device_type",
  os: "os",
  browser: "browser",
  referrer: "referrer_host",
} as const satisfies Record<string, keyof NewScanRow>;
export type Dimension = keyof typeof DIMENSIONS;

// Ten columns a row; Postgres allows 65,535 parameters a statement.
const ROWS_PER_STATEMENT = 1000;

const dayOf = (at: Date | string) => new Date(at).toISOString().slice(0, 10);

/** Adds 1 to `counts[key]`, keeping the parts of the key beside the count. */
function tally<Parts extends unknown[]>(counts: Map<string, { parts: Parts; n: number }>, parts: Parts): void {
  const key = JSON.stringify(parts);
  const entry = counts.get(key);
  if (entry) entry.n += 1;
  else counts.set(key, { parts, n: 1 });
}

/** A tally's entries in key order, so concurrent batches lock rollup rows in the same order and never deadlock. */
const inKeyOrder = <Parts extends unknown[]>(counts: Map<string, { parts: Parts; n: number }>) =>
  [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, entry]) => entry);

function chunks<T>(items: T[]): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += ROWS_PER_STATEMENT) result.push(items.slice(i, i + ROWS_PER_STATEMENT));
  return result;
}

/**
 * Stores a batch of scans and adds the new ones to every rollup, in one transaction: a scan is either
 * stored and counted everywhere, or not at all. Scans whose id is already stored are skipped, so a
 * batch that is sent again (after a timeout, say) changes nothing. Returns how many were new.
 */
export async function storeScans(db: Db, scans: NewScanRow[]): Promise<number> {
  if (scans.length === 0) return 0;
  return db.transaction().execute(async (trx) => {
    const byId = new Map(scans.map((scan) => [scan.id, scan]));
    const stored: NewScanRow[] = [];
    for (const chunk of chunks([...byId.values()])) {
      const ids = await trx.insertInto("scans").values(chunk).onConflict((oc) => oc.column("id").doNothing()).returning("id").execute();
      for (const { id } of ids) stored.push(byId.get(id)!);
    }
    if (stored.length > 0) await addToRollups(trx, stored);
    return stored.length;
  });
}

async function addToRollups(trx: Trx, scans: NewScanRow[]): Promise<void> {
  const totals = new Map<string, { parts: [string, string]; n: number }>();
  const days = new Map<string, { parts: [string, string]; n: number }>();
  const values = new Map<string, { parts: [string, string, string, string]; n: number }>();
  const visitors = new Map<string, { parts: [string, string, string]; n: number }>();
  for (const scan of scans) {
    const day = dayOf(scan.scanned_at);
    tally(totals, [scan.link_id, scan.account_id]);
    tally(days, [scan.link_id, day]);
    tally(visitors, [scan.link_id, day, scan.visitor_key]);
    for (const [dimension, column] of Object.entries(DIMENSIONS)) tally(values, [scan.link_id, day, dimension, scan[column]]);
  }

  // A visitor counts once a day: only visitor-days not seen before add to unique_scans.
  const newVisitorDays = new Map<string, { parts: [string, string]; n: number }>();
  for (const chunk of chunks(inKeyOrder(visitors))) {
    const inserted = await trx
      .insertInto("scan_day_visitors")
      .values(chunk.map(({ parts: [link_id, day, visitor_key] }) => ({ link_id, day, visitor_key })))
      .onConflict((oc) => oc.columns(["link_id", "day", "visitor_key"]).doNothing())
      .returning(["link_id", sql<string>`to_char(day, 'YYYY-MM-DD')`.as("day")])
      .execute();
    for (const row of inserted) tally(newVisitorDays, [row.link_id, row.day]);
  }

  for (const chunk of chunks(inKeyOrder(totals))) {
    await trx
      .insertInto("scan_totals")
      .values(chunk.map(({ parts: [link_id, account_id], n }) => ({ link_id, account_id, scans: n })))
      .onConflict((oc) => oc.column("link_id").doUpdateSet({ scans: sql`scan_totals.scans + excluded.scans` }))
      .execute();
  }
  for (const chunk of chunks(inKeyOrder(days))) {
    await trx
      .insertInto("scan_days")
      .values(
        chunk.map(({ parts: [link_id, day], n }) => ({
          link_id,
          day,
          scans: n,
          unique_scans: newVisitorDays.get(JSON.stringify([link_id, day]))?.n ?? 0,
        })),
      )
      .onConflict((oc) =>
        oc.columns(["link_id", "day"]).doUpdateSet({
          scans: sql`scan_days.scans + excluded.scans`,
          unique_scans: sql`scan_days.unique_scans + excluded.unique_scans`,
        }),
      )
      .execute();
  }
  for (const chunk of chunks(inKeyOrder(values))) {
    await trx
      .insertInto("scan_day_values")
      .values(chunk.map(({ parts: [link_id, day, dimension, value], n }) => ({ link_id, day, dimension, value, scans: n })))
      .onConflict((oc) => oc.columns(["link_id", "day", "dimension", "value"]).doUpdateSet({ scans: sql`scan_day_values.scans + excluded.scans` }))
      .execute();
  }
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
      .selectFrom("scan_day_visitors")
      .select(sql<number>`count(distinct visitor_key)::int`.as("visitors"))
      .where("link_id", "=", linkId)
      .where("day", ">=", from)
      .where("day", "<=", to)
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
