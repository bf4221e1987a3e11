// The migration to narrow scan rows runs while scans keep arriving: writers of the version before
// fail on the new tables once it commits (their scans are sent again, by this version, as a spool
// replay would), none is lost or stored twice, and a batch stored before it is still recognised
// after it, its visitors not counted again.
import { randomUUID } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateSchema, type Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { migrations, SCHEMA } from "../migrations/index.js";
import { emptyScanColumns } from "../src/scans/scan-columns.js";
import { timeOrderedScanId } from "../src/scans/recording/scan-id.js";
import { foldScanDeltas, storeScans } from "../src/scans/analytics/scans.repository.js";
import type { LinksTables } from "../src/tables.js";

const MIGRATION = "20270120T1000_narrow_scans";

let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());

describe("the migration to narrow scan rows", () => {
  it("loses no scan arriving during it, stores none twice and still tells a batch stored before it", async () => {
    const { db } = database;
    await migrateSchema(
      db,
      SCHEMA,
      Object.fromEntries(Object.entries(migrations).filter(([name]) => name < MIGRATION)),
    );
    const [linkId, accountId] = [randomUUID(), randomUUID()];
    await sql`insert into links.links (id, account_id, slug, destination_url, status, created_at, updated_at)
      values (${linkId}, ${accountId}, 'narrow', 'https://example.com/', 'active', now(), now())`.execute(db);
    type Scan = { id: string; at: number; visitor: string };
    // A scan stored the way the version before stores it: its row and its visitor-day in one statement.
    const storeAsBefore = async ({ id, at, visitor }: Scan) => {
      await sql`with scan as (
          insert into links.scans (id, link_id, account_id, scanned_at, country, device_type, os, browser, referrer_host, visitor_key)
          values (${id}, ${linkId}, ${accountId}, to_timestamp(${at / 1000}), 'DE', 'mobile', 'iOS', 'Safari', '', ${visitor}) returning 1)
        insert into links.scan_day_visitors (link_id, day, visitor_key)
        values (${linkId}, (to_timestamp(${at / 1000}) at time zone 'UTC')::date, ${visitor}) on conflict do nothing`.execute(
        db,
      );
    };
    const scanAt = (at: number, visitor: string): Scan => ({ id: timeOrderedScanId(at), at, visitor });
    const now = Date.now();
    const before = Array.from({ length: 20 }, (_, i) => scanAt(now - i * 60_000, `early-${i}`));
    for (const scan of before) await storeAsBefore(scan);

    const arriving = Array.from({ length: 40 }, (_, i) => scanAt(now + i, `arriving-${i}`));
    const refused: Scan[] = [];
    const writer = (async () => {
      for (const scan of arriving) {
        await storeAsBefore(scan).catch(() => refused.push(scan));
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const throughIt = Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= MIGRATION));
    const [applied] = await Promise.all([migrateSchema(db, SCHEMA, throughIt), writer]);
    expect(applied).toEqual([MIGRATION]);

    const links = db.withSchema("links") as Kysely<LinksTables>;
    const send = async (scans: Scan[]) => {
      const columns = emptyScanColumns();
      for (const { id, at, visitor } of scans) {
        columns.id.push(id);
        columns.linkId.push(linkId);
        columns.scannedAtMs.push(at);
        columns.country.push("DE");
        columns.deviceType.push("mobile");
        columns.os.push("iOS");
        columns.browser.push("Safari");
        columns.referrerHost.push("");
        columns.visitorKey.push(visitor);
      }
      const stored = await storeScans(links, columns);
      return stored === undefined ? scans.length : stored.size;
    };
    // What the writers of before could not store comes again, with everything stored before it (a spool replayed whole).
    expect(await send([...before, ...arriving])).toBe(refused.length);
    // Sent once more, nothing is new.
    expect(await send([...before, ...arriving])).toBe(0);
    // A new scan of a visitor the table of before saw today is a scan, not a new visitor.
    expect(await send([scanAt(now - 30_000, "early-0")])).toBe(1);
    await foldScanDeltas(links);

    const { rows } = await sql<{ wide: number; narrow: number; visitors: number; scans: number; unique: number }>`
      select (select count(*)::int from links.scans_wide) as wide, (select count(*)::int from links.scans) as narrow,
        (select count(*)::int from links.visitor_days where link_id = ${linkId}) as visitors,
        (select coalesce(sum(scans), 0)::int from links.scan_days where link_id = ${linkId}) as scans,
        (select coalesce(sum(unique_scans), 0)::int from links.scan_days where link_id = ${linkId}) as unique`.execute(
      db,
    );
    expect(rows[0]!.wide + rows[0]!.narrow).toBe(before.length + arriving.length + 1);
    expect(rows[0]!.narrow).toBe(refused.length + 1);
    expect(rows[0]!.visitors).toBe(before.length + arriving.length);
    // The rollups count what this version stored; the version before counted its own in its deltas.
    expect([rows[0]!.scans, rows[0]!.unique]).toEqual([refused.length + 1, refused.length]);
  });
});
