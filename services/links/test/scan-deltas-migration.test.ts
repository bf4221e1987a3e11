// The migration that gives links.scan_deltas one row per combination of values: deltas written in the
// old shape (one row per link and day, one per dimension and value) are folded into the rollups
// first, so every scan is counted once across it, in both shapes of the platform.
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateSchema, type Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { migrations, SCHEMA } from "../migrations/index.js";

const BEFORE = "20261228T1000_scan_deltas_by_combination";

let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());

describe("the scan_deltas migration to combinations", () => {
  it("folds the deltas in the old shape into the rollups, counting each scan once", async () => {
    const older = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < BEFORE));
    await migrateSchema(database.db, SCHEMA, older);
    const [linkId, accountId] = [randomUUID(), randomUUID()];
    const { db } = database;
    await sql`insert into links.links (id, account_id, slug, destination_url, status, created_at, updated_at)
      values (${linkId}, ${accountId}, 'migrated', 'https://example.com/', 'active', now(), now())`.execute(db);
    // Already folded: 5 scans by 2 visitors on the 20th; not yet: 3 more scans by 1 new visitor, two batches.
    await sql`insert into links.scan_totals values (${linkId}, ${accountId}, 5)`.execute(db);
    await sql`insert into links.scan_days values (${linkId}, '2026-11-20', 5, 2)`.execute(db);
    await sql`insert into links.scan_day_values values (${linkId}, '2026-11-20', 'country', 'DE', 5)`.execute(db);
    await sql`insert into links.scan_deltas (link_id, account_id, day, dimension, value, scans, visitors) values
      (${linkId}, ${accountId}, '2026-11-20', '', '', 2, 1), (${linkId}, ${accountId}, '2026-11-20', 'country', 'DE', 1, 0),
      (${linkId}, ${accountId}, '2026-11-20', 'country', 'FR', 1, 0),
      (${linkId}, ${accountId}, '2026-11-20', '', '', 1, 0), (${linkId}, ${accountId}, '2026-11-20', 'country', 'DE', 1, 0)`.execute(
      db,
    );

    const throughIt = Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= BEFORE));
    expect(await migrateSchema(db, SCHEMA, throughIt)).toEqual([BEFORE]);
    const { rows: totals } = await sql<{
      scans: number;
    }>`select scans from links.scan_totals where link_id = ${linkId}`.execute(db);
    const { rows: days } = await sql<{ scans: number; unique_scans: number }>`
      select scans, unique_scans from links.scan_days where link_id = ${linkId}`.execute(db);
    const { rows: values } = await sql<{ value: string; scans: number }>`
      select value, scans from links.scan_day_values where link_id = ${linkId} order by value`.execute(db);
    expect(totals).toEqual([{ scans: 8 }]);
    expect(days).toEqual([{ scans: 8, unique_scans: 3 }]);
    expect(values).toEqual([
      { value: "DE", scans: 7 },
      { value: "FR", scans: 1 },
    ]);
    const { rows: left } = await sql<{ n: number }>`select count(*)::int as n from links.scan_deltas`.execute(db);
    expect(left).toEqual([{ n: 0 }]);
  });
});
