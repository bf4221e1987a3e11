// The migration that packs a link-day's rollups and sketch into one row of bytes runs while scans keep
// arriving and the version before keeps folding and saving sketches through a rolling upgrade: every
// scan is counted once whichever version folded it, the version before's readers find every count,
// and every sketch either version saves reaches this version.
import { randomUUID } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { Migrator } from "kysely/migration";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateSchema, type Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { migrations, SCHEMA } from "../migrations/index.js";
import { decodeDayCounts, encodeDayCounts } from "../src/scans/analytics/day-encoding.js";
import { foldScanDeltas } from "../src/scans/analytics/scan-fold.js";
import { daySketches, saveDaySketches, summarizeScans } from "../src/scans/analytics/scans.repository.js";
import { emptySketch } from "../src/scans/analytics/visitor-sketch.js";
import type { LinksTables } from "../src/tables.js";
import { insertLink, migrateBefore, scanSender } from "./support/migration-test.js";

const MIGRATION = "20270310T1000_packed_day_rollups";
/** How the version before's fold fails once links.scan_day_rollups is a view, on either engine. */
const FOLD_ON_VIEW_FAILS = /cannot insert into view "scan_day_rollups"/;

let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());

describe("the migration to packed link-day rows", () => {
  it("counts every scan once across it, folded by either version, and keeps every sketch either saves", async () => {
    const { db } = database;
    await migrateBefore(db, MIGRATION);
    const links = db.withSchema("links") as Kysely<LinksTables>;
    const { linkId } = await insertLink(db, "packed");
    const now = Date.now();
    const today = new Date(now).toISOString().slice(0, 10);
    const send = scanSender(db, linkId, now);
    // How the version before folds: counts added to links.scan_day_rollups, its arrays rewritten whole.
    const foldAsBefore = () =>
      sql`WITH folded AS (DELETE FROM links.scan_deltas RETURNING *),
        totals AS (
          INSERT INTO links.scan_totals (link_id, account_id, scans)
          SELECT link_id, account_id, sum(scans) FROM folded GROUP BY 1, 2
          ON CONFLICT (link_id) DO UPDATE SET scans = scan_totals.scans + excluded.scans),
        day_values AS (
          SELECT link_id, day, breakdown.dimension_value, sum(scans) AS scans
          FROM folded CROSS JOIN LATERAL (VALUES ('c' || folded.country), ('d' || folded.device_type), ('o' || folded.os),
            ('b' || folded.browser), ('r' || folded.referrer_host), (CASE WHEN folded.rule = '' THEN NULL ELSE 'u' || folded.rule END))
            AS breakdown (dimension_value)
          WHERE breakdown.dimension_value IS NOT NULL
          GROUP BY 1, 2, 3),
        new_codes AS (
          INSERT INTO links.scan_values (dimension_value) SELECT DISTINCT dimension_value FROM day_values
          ON CONFLICT (dimension_value) DO NOTHING RETURNING code, dimension_value),
        codes AS (
          SELECT code, dimension_value FROM links.scan_values WHERE dimension_value IN (SELECT dimension_value FROM day_values)
          UNION ALL SELECT code, dimension_value FROM new_codes),
        breakdowns AS (
          SELECT link_id, day, array_agg(code ORDER BY code) AS value_codes, array_agg(scans ORDER BY code) AS value_scans
          FROM (
            SELECT link_id, day, code, sum(scans)::bigint AS scans FROM (
              SELECT link_id, day, codes.code, scans FROM day_values JOIN codes USING (dimension_value)
              UNION ALL
              SELECT kept.link_id, kept.day, entry.code, entry.scans FROM links.scan_day_rollups AS kept
              JOIN (SELECT DISTINCT link_id, day FROM day_values) AS touched USING (link_id, day)
              CROSS JOIN LATERAL unnest(kept.value_codes, kept.value_scans) AS entry (code, scans)
            ) AS both_sides GROUP BY 1, 2, 3
          ) AS merged GROUP BY 1, 2)
        INSERT INTO links.scan_day_rollups (link_id, day, scans, unique_scans, value_codes, value_scans)
        SELECT link_id, day, counts.scans, counts.unique_scans,
          coalesce(breakdowns.value_codes, '{}'), coalesce(breakdowns.value_scans, '{}')
        FROM (SELECT link_id, day, sum(scans) AS scans, sum(visitors) AS unique_scans FROM folded GROUP BY 1, 2) AS counts
        LEFT JOIN breakdowns USING (link_id, day)
        ON CONFLICT (link_id, day) DO UPDATE SET
          scans = scan_day_rollups.scans + excluded.scans, unique_scans = scan_day_rollups.unique_scans + excluded.unique_scans,
          value_codes = excluded.value_codes, value_scans = excluded.value_scans`.execute(db);
    // How the version before reads: the arrays of links.scan_day_rollups, by value.
    const readAsBefore = async () => {
      const { rows } = await sql<{ dimension_value: string; scans: number }>`
        SELECT known.dimension_value, sum(entry.scans)::int AS scans
        FROM links.scan_day_rollups AS kept
        CROSS JOIN LATERAL unnest(kept.value_codes, kept.value_scans) AS entry (code, scans)
        JOIN links.scan_values AS known ON known.code = entry.code
        WHERE kept.link_id = ${linkId} AND kept.day = ${today}
        GROUP BY 1 ORDER BY 1`.execute(db);
      return rows;
    };
    // How the version before saves a day's sketch.
    const saveSketchAsBefore = (day: string, visitors: number, register: number) => {
      const registers = emptySketch();
      registers[register] = 5;
      return sql`INSERT INTO links.scan_day_sketches (link_id, day, visitors, registers)
        VALUES (${linkId}, ${day}, ${visitors}, ${Buffer.from([register >> 8, register & 0xff, 5])})
        ON CONFLICT (link_id, day) DO UPDATE SET visitors = excluded.visitors, registers = excluded.registers`.execute(
        db,
      );
    };

    await send(30, "DE");
    await foldAsBefore();
    await send(10, "FR");
    await saveSketchAsBefore("2026-01-01", 40, 7);

    // Scans keep arriving and the version before folds as the migration starts. The embedded engine
    // runs statements one at a time in the order sent, so the fold, sent first, runs before the
    // migration's lock; on PostgreSQL it may instead wait for that lock and then fail on the view,
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
    if (process.env.DATABASE_URL) expect(folderOutcome).toMatch(new RegExp(`^folded$|${FOLD_ON_VIEW_FAILS.source}`));
    else expect(folderOutcome).toBe("folded");
    await migrateSchema(db, SCHEMA, migrations);

    // The version before's readers find what was folded, through the view of the packed rows.
    expect((await readAsBefore()).find((row) => row.dimension_value === "cDE")).toEqual({
      dimension_value: "cDE",
      scans: 30,
    });
    // Its folds fail from now on and leave their deltas to this version's.
    await send(5, "FR");
    await expect(foldAsBefore()).rejects.toThrow(FOLD_ON_VIEW_FAILS);
    const { rows: waiting } = await sql<{ n: number }>`
      SELECT coalesce(sum(scans), 0)::int AS n FROM links.scan_deltas WHERE link_id = ${linkId}`.execute(db);
    expect(waiting[0]!.n).toBeGreaterThanOrEqual(5);
    // Its sketches reach this version's rows, for a day with counts and for one without.
    await saveSketchAsBefore("2026-01-02", 3, 9);
    await saveSketchAsBefore(today, 7, 11);

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
    const summary = () => summarizeScans(links, linkId, "2026-01-01", today);
    // Unfolded deltas are counted beside the packed rows, and folding moves them without counting twice.
    expect(sorted((await summary()).breakdowns)).toEqual(expected);
    expect((await summary()).daily).toEqual([{ day: today, scans: 65, uniqueScans: 7 }]);
    await foldScanDeltas(links);
    expect(sorted((await summary()).breakdowns)).toEqual(expected);
    expect((await summary()).daily).toEqual([{ day: today, scans: 65, uniqueScans: 7 }]);
    const { rows: view } = await sql<{ scans: number; unique_scans: number }>`
      SELECT scans::int, unique_scans::int FROM links.scan_day_rollups WHERE link_id = ${linkId} AND day = ${today}`.execute(
      db,
    );
    expect(view).toEqual([{ scans: 65, unique_scans: 7 }]);

    const sketches = await daySketches(links, linkId, "2026-01-01", today);
    expect([...sketches].map(([day, { visitors, registers }]) => [day, visitors, registers.indexOf(5)])).toEqual([
      ["2026-01-01", 40, 7],
      ["2026-01-02", 3, 9],
      [today, 7, 11],
    ]);
    // The fold kept the sketch saved before it, in the same row.
    const { rows } = await sql<{ rows: number }>`
      SELECT count(*)::int AS rows FROM links.scan_link_days WHERE link_id = ${linkId} AND day = ${today}`.execute(db);
    expect(rows).toEqual([{ rows: 1 }]);
  });

  it("packs in SQL exactly as the service does, and unpacks what it packs", async () => {
    const { db } = database;
    await migrateSchema(db, SCHEMA, migrations);
    const counts = {
      scans: 2 ** 40 + 7,
      uniqueScans: -3,
      values: new Map([
        [3, 1],
        [2 ** 31 + 5, 2 ** 32 + 3],
        [2 ** 50, 200],
      ]),
    };
    const codes = `{${[...counts.values.keys()].join(",")}}`;
    const scans = `{${[...counts.values.values()].join(",")}}`;
    const { rows } = await sql<{ packed: Uint8Array }>`
      SELECT links.scan_day_pack(${counts.scans}, ${counts.uniqueScans}, ${codes}::bigint[], ${scans}::bigint[]) AS packed`.execute(
      db,
    );
    expect(new Uint8Array(rows[0]!.packed)).toEqual(encodeDayCounts(counts));
    const { rows: visitors } = await sql<{ n: string; negative: string }>`
      SELECT links.scan_day_unique_scans(${Buffer.from(encodeDayCounts({ ...counts, uniqueScans: 2 ** 33 + 1 }))})::text AS n,
        links.scan_day_unique_scans(${Buffer.from(encodeDayCounts(counts))})::text AS negative`.execute(db);
    expect(visitors).toEqual([{ n: String(2 ** 33 + 1), negative: "-3" }]);
    expect(decodeDayCounts(new Uint8Array(rows[0]!.packed))).toEqual(counts);
    const { rows: unpacked } = await sql<{
      scans: string;
      unique_scans: string;
      value_codes: string[];
      value_scans: string[];
    }>`
      SELECT scans::text, unique_scans::text, value_codes::text[], value_scans::text[]
      FROM links.scan_day_unpack(${Buffer.from(encodeDayCounts(counts))})`.execute(db);
    expect(unpacked).toEqual([
      {
        scans: String(counts.scans),
        unique_scans: "-3",
        value_codes: [...counts.values.keys()].map(String),
        value_scans: [...counts.values.values()].map(String),
      },
    ]);
  });

  it("goes back down keeping every count and sketch, and up again", async () => {
    const { db } = database;
    await migrateSchema(db, SCHEMA, migrations);
    const links = db.withSchema("links") as Kysely<LinksTables>;
    const [linkId, accountId] = [randomUUID(), randomUUID()];
    await sql`insert into links.links (id, account_id, slug, destination_url, status, created_at, updated_at)
      values (${linkId}, ${accountId}, 'down', 'https://example.com/', 'active', now(), now())`.execute(db);
    await sql`insert into links.scan_deltas (link_id, account_id, day, country, device_type, os, browser, referrer_host, scans, visitors)
      values (${linkId}, ${accountId}, '2027-03-01', 'DE', 'mobile', 'iOS', 'Safari', '', 4, 3)`.execute(db);
    await foldScanDeltas(links);
    const registers = emptySketch();
    registers[300] = 9;
    await saveDaySketches(links, linkId, [
      { day: "2027-03-01", visitors: 3, registers },
      { day: "2027-03-02", visitors: 1, registers },
    ]);
    const before = await summarizeScans(links, linkId, "2027-03-01", "2027-03-02");

    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => migrations },
      migrationTableSchema: SCHEMA,
    });
    // The migrations after it go first.
    expect((await migrator.migrateTo(MIGRATION)).error).toBeUndefined();
    const { error, results } = await migrator.migrateDown();
    expect(error).toBeUndefined();
    expect(results?.map((r) => r.migrationName)).toEqual([MIGRATION]);
    const { rows: rollups } = await sql<{ scans: number; unique_scans: number; values: number }>`
      select scans::int, unique_scans::int, cardinality(value_codes) as values
      from links.scan_day_rollups where link_id = ${linkId}`.execute(db);
    expect(rollups).toEqual([{ scans: 4, unique_scans: 3, values: 5 }]);
    const { rows: sketches } = await sql<{ day: string; visitors: number; registers: Uint8Array }>`
      select to_char(day, 'YYYY-MM-DD') as day, visitors::int, registers from links.scan_day_sketches
      where link_id = ${linkId} order by day`.execute(db);
    expect(sketches.map((row) => [row.day, row.visitors, [...new Uint8Array(row.registers)]])).toEqual([
      ["2027-03-01", 3, [1, 44, 9]],
      ["2027-03-02", 1, [1, 44, 9]],
    ]);

    await migrateSchema(db, SCHEMA, migrations);
    expect(await summarizeScans(links, linkId, "2027-03-01", "2027-03-02")).toEqual(before);
    expect([...(await daySketches(links, linkId, "2027-03-01", "2027-03-02")).keys()]).toEqual([
      "2027-03-01",
      "2027-03-02",
    ]);
  });
});
