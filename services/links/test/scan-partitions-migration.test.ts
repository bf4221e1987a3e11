// The migration that partitions links.scans and links.scan_day_visitors by day runs while scans keep
// arriving: every scan inserted before, during and after it is kept once, the old rows become one
// partition (no copy), and a scan stored before it is still recognised when its batch is sent again.
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateSchema, type Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { migrations, SCHEMA } from "../migrations/index.js";

const MIGRATION = "20270110T1000_scan_partitions";

let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());

describe("the migration to daily scan partitions", () => {
  it("loses no scan arriving during it, keeps the old rows as one partition and still tells a scan sent again", async () => {
    const { db } = database;
    const older = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < MIGRATION));
    await migrateSchema(db, SCHEMA, older);
    const [linkId, accountId] = [randomUUID(), randomUUID()];
    await sql`insert into links.links (id, account_id, slug, destination_url, status, created_at, updated_at)
      values (${linkId}, ${accountId}, 'partitioned', 'https://example.com/', 'active', now(), now())`.execute(db);
    // Scans of the way the service stored them before: as the old writers still do while it runs.
    const insertScan = async (id: string, at: string) => {
      await sql`insert into links.scans (id, link_id, account_id, scanned_at, country, device_type, os, browser, referrer_host, visitor_key)
        values (${id}, ${linkId}, ${accountId}, ${at}::timestamptz, 'DE', 'mobile', 'iOS', 'Safari', '', 'visitor')`.execute(
        db,
      );
      await sql`insert into links.scan_day_visitors (link_id, day, visitor_key) values (${linkId}, (${at}::timestamptz at time zone 'UTC')::date, ${id})`.execute(
        db,
      );
    };
    const oldId = randomUUID();
    await insertScan(oldId, "2026-01-15T10:00:00Z");
    for (let i = 0; i < 20; i++) await insertScan(randomUUID(), new Date(Date.now() - i * 3_600_000).toISOString());

    // Scans keep coming while it runs (on Postgres they wait for its locks, then find the new tables).
    const arriving = 40;
    const writer = (async () => {
      for (let i = 0; i < arriving; i++) {
        await insertScan(randomUUID(), new Date().toISOString());
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const throughIt = Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= MIGRATION));
    const [applied] = await Promise.all([migrateSchema(db, SCHEMA, throughIt), writer]);
    expect(applied).toEqual([MIGRATION]);

    const { rows: scans } = await sql<{ n: number }>`select count(*)::int as n from links.scans`.execute(db);
    const { rows: visitors } = await sql<{ n: number }>`select count(*)::int as n from links.scan_day_visitors`.execute(
      db,
    );
    expect(scans).toEqual([{ n: 21 + arriving }]);
    expect(visitors).toEqual([{ n: 21 + arriving }]);
    const { rows: partitioned } = await sql<{ relname: string }>`
      select c.relname from pg_partitioned_table p join pg_class c on c.oid = p.partrelid
      join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'links' order by 1`.execute(db);
    expect(partitioned.map((row) => row.relname)).toEqual(["scan_day_visitors", "scans"]);
    const { rows: inOld } = await sql<{
      n: number;
    }>`select count(*)::int as n from links.scans_before_partitions where id = ${oldId}`.execute(db);
    expect(inOld).toEqual([{ n: 1 }]);
    // The old scan sent again: its (id, time) is taken.
    await expect(insertScan(oldId, "2026-01-15T10:00:00Z")).rejects.toMatchObject({ code: "23505" });
  });
});
