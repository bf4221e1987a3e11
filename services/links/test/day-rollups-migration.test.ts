// The migration that packs a link-day's rollups into one row runs while scans keep arriving and the
// version before keeps folding through a rolling upgrade: every scan is counted once in the daily
// counts and breakdowns, whichever version folded it, and the version before's readers find them all.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateSchema, type Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { migrations, SCHEMA } from "../migrations/index.js";
import { foldScanDeltas } from "../src/scans/analytics/scan-fold.js";
import { summarizeScans } from "../src/scans/analytics/scans.repository.js";
import type { LinksTables } from "../src/tables.js";
import { insertLink, migrateBefore, scanSender } from "./support/migration-test.js";

const MIGRATION = "20270301T1000_day_rollups";
/**
 * How the version before's fold fails on the views, on either engine; once 20270310T1000_packed_day_rollups
 * has made links.scan_day_rollups a view too, links.scan_days writes through to nothing.
 */
const FOLD_ON_VIEWS_FAILS =
  /cannot insert into view "scan_day_values"|null value in column "value_codes" of relation "scan_day_rollups" violates not-null constraint|cannot insert into view "scan_day_rollups"/;

let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());

describe("the migration to one row of rollups per link and day", () => {
  it("counts every scan once across it, folded by either version, and answers both versions' readers", async () => {
    const { db } = database;
    await migrateBefore(db, MIGRATION);
    const links = db.withSchema("links") as Kysely<LinksTables>;
    const { linkId } = await insertLink(db, "packed");
    const now = Date.now();
    const today = new Date(now).toISOString().slice(0, 10);
    const send = scanSender(db, linkId, now);
    // How the version before folds: a row of links.scan_days per link and day, and of
    // links.scan_day_values per link, day, dimension and value.
    const foldAsBefore = () =>
      sql`WITH folded AS (DELETE FROM links.scan_deltas RETURNING *),
        totals AS (
          INSERT INTO links.scan_totals (link_id, account_id, scans)
          SELECT link_id, account_id, sum(scans) FROM folded GROUP BY 1, 2
          ON CONFLICT (link_id) DO UPDATE SET scans = scan_totals.scans + excluded.scans),
        days AS (
          INSERT INTO links.scan_days (link_id, day, scans, unique_scans)
          SELECT link_id, day, sum(scans), sum(visitors) FROM folded GROUP BY 1, 2
          ON CONFLICT (link_id, day) DO UPDATE
            SET scans = scan_days.scans + excluded.scans, unique_scans = scan_days.unique_scans + excluded.unique_scans),
        dimension_values AS (
          INSERT INTO links.scan_day_values (link_id, day, dimension, value, scans)
          SELECT link_id, day, breakdown.dimension, breakdown.value, sum(scans)
          FROM folded CROSS JOIN LATERAL (VALUES ('country', folded.country), ('device', folded.device_type),
            ('os', folded.os), ('browser', folded.browser), ('referrer', folded.referrer_host), ('rule', folded.rule))
            AS breakdown (dimension, value)
          WHERE breakdown.value <> '' OR breakdown.dimension <> 'rule'
          GROUP BY 1, 2, 3, 4
          ON CONFLICT (link_id, day, dimension, value) DO UPDATE SET scans = scan_day_values.scans + excluded.scans)
        SELECT count(*)::int AS folded FROM folded`.execute(db);
    const readAsBefore = async () => {
      const { rows } = await sql<{ dimension: string; value: string; scans: number }>`
        SELECT dimension, value, sum(scans)::int AS scans FROM links.scan_day_values
        WHERE link_id = ${linkId} AND day BETWEEN ${today} AND ${today} GROUP BY 1, 2 ORDER BY 1, 2`.execute(db);
      return rows;
    };

    await send(30, "DE");
    await foldAsBefore();
    await send(10, "FR");

    // Scans keep arriving and the version before folds as the migration starts. The embedded engine
    // runs statements one at a time in the order sent, so the fold, sent first, runs before the
    // migration's lock; on PostgreSQL it may instead wait for that lock and then fail on the views,
    // leaving its deltas.
    const writer = (async () => {
      for (let i = 0; i < 20; i++) {
        await send(1, "GB");
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const folder = foldAsBefore().then(
      () => "folded",
      (error: Error) => error.message,
    );
    const throughIt = Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= MIGRATION));
    const [applied, , folderOutcome] = await Promise.all([migrateSchema(db, SCHEMA, throughIt), writer, folder]);
    expect(applied).toEqual([MIGRATION]);
    if (process.env.DATABASE_URL) expect(folderOutcome).toMatch(new RegExp(`^folded$|${FOLD_ON_VIEWS_FAILS.source}`));
    else expect(folderOutcome).toBe("folded");
    await migrateSchema(db, SCHEMA, migrations);

    // The version before's readers find what was folded, through the view of the packed rows.
    const folded = await readAsBefore();
    expect(folded.find((row) => row.dimension === "country" && row.value === "DE")).toEqual({
      dimension: "country",
      value: "DE",
      scans: 30,
    });
    // Its folds fail from now on and leave their deltas to this version's.
    await send(5, "FR");
    await expect(foldAsBefore()).rejects.toThrow(FOLD_ON_VIEWS_FAILS);
    const { rows: waiting } = await sql<{ n: number }>`
      SELECT coalesce(sum(scans), 0)::int AS n FROM links.scan_deltas WHERE link_id = ${linkId}`.execute(db);
    expect(waiting[0]!.n).toBeGreaterThanOrEqual(5);

    const expected = [
      { dimension: "browser", value: "Safari", scans: 65 },
      { dimension: "country", value: "DE", scans: 30 },
      { dimension: "country", value: "FR", scans: 15 },
      { dimension: "country", value: "GB", scans: 20 },
      { dimension: "device", value: "desktop", scans: 32 },
      { dimension: "device", value: "mobile", scans: 33 },
      { dimension: "os", value: "iOS", scans: 65 },
      { dimension: "referrer", value: "", scans: 65 },
    ];
    const sorted = (rows: { dimension: string; value: string; scans: number }[]) =>
      [...rows].sort((a, b) => a.dimension.localeCompare(b.dimension) || a.value.localeCompare(b.value));
    // Unfolded deltas are counted beside the packed rows, and folding moves them without counting twice.
    expect(sorted((await summarizeScans(links, linkId, today, today)).breakdowns)).toEqual(expected);
    expect((await summarizeScans(links, linkId, today, today)).daily).toEqual([
      { day: today, scans: 65, uniqueScans: 7 },
    ]);
    await foldScanDeltas(links);
    expect(sorted((await summarizeScans(links, linkId, today, today)).breakdowns)).toEqual(expected);
    expect(await readAsBefore()).toEqual(expected);
    const { rows: packed } = await sql<{ rows: number }>`
      SELECT count(*)::int AS rows FROM links.scan_day_rollups WHERE link_id = ${linkId}`.execute(db);
    expect(packed).toEqual([{ rows: 1 }]);
    expect((await summarizeScans(links, linkId, today, today)).daily).toEqual([
      { day: today, scans: 65, uniqueScans: 7 },
    ]);
    const { rows: days } = await sql<{ scans: number; unique_scans: number }>`
      SELECT scans::int, unique_scans::int FROM links.scan_days WHERE link_id = ${linkId}`.execute(db);
    expect(days).toEqual([{ scans: 65, unique_scans: 7 }]);
  });
});
