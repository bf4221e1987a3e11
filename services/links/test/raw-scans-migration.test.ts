// The migration to raw scan rows runs while scans keep arriving from writers of the version before,
// which go on storing through a rolling upgrade: no scan is lost or stored twice whichever version
// stores it and whichever is sent it again, and a visitor is counted once a day.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateSchema, type Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { migrations, SCHEMA } from "../migrations/index.js";
import { emptyScanColumns } from "../src/scans/scan-columns.js";
import { timeOrderedScanId } from "../src/scans/recording/scan-id.js";
import { foldScanDeltas } from "../src/scans/analytics/scan-fold.js";
import { maintainScanPartitions } from "../src/scans/analytics/scan-partitions.js";
import { storeScans } from "../src/scans/analytics/scan-store.js";
import { hourlyScans } from "../src/scans/analytics/scans.repository.js";
import type { LinksTables } from "../src/tables.js";
import { insertLink, migrateBefore } from "./support/migration-test.js";

const MIGRATION = "20270310T1100_raw_scans";

let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());

describe("the migration to raw scan rows", () => {
  it("loses no scan arriving during it, and stores each once whichever version is sent it again", async () => {
    const { db } = database;
    await migrateBefore(db, MIGRATION);
    const { linkId, accountId } = await insertLink(db, "raw");
    type Scan = { id: string; at: number; visitor: string };
    // A scan stored the way the version before stores it, in one statement: its row, and its
    // visitor-day and delta when the row is new.
    const storeAsBefore = async ({ id, at, visitor }: Scan): Promise<number> => {
      const { rows } = await sql<{ n: number }>`with scan as (
          insert into links.scan_events (id, link_id, visitor, agent, country, referrer_host)
          values (${id}, ${linkId}, hashtextextended(${visitor}, 0), 1, 'DE', '')
          on conflict (id) do nothing returning link_id, visitor),
        visitor as (
          insert into links.scan_visitor_days (link_id, day, visitor)
          select link_id, (to_timestamp(${at / 1000}) at time zone 'UTC')::date, visitor from scan
          on conflict do nothing returning 1),
        delta as (
          insert into links.scan_deltas (link_id, account_id, day, country, device_type, os, browser, referrer_host, rule, scans, visitors)
          select link_id, ${accountId}, (to_timestamp(${at / 1000}) at time zone 'UTC')::date, 'DE', 'mobile', 'iOS', 'Safari', '', '', 1,
            (select count(*) from visitor) from scan)
        select count(*)::int as n from scan`.execute(db);
      return rows[0]!.n;
    };
    const scanAt = (at: number, visitor: string): Scan => ({ id: timeOrderedScanId(at), at, visitor });
    const now = Date.now();
    const before = Array.from({ length: 20 }, (_, i) => scanAt(now - i * 60_000, `early-${i}`));
    for (const scan of before) await storeAsBefore(scan);

    // The version before keeps storing while it runs (on Postgres its writers wait for its locks).
    const during = Array.from({ length: 40 }, (_, i) => scanAt(now + i, `during-${i}`));
    const writer = (async () => {
      for (const scan of during) {
        expect(await storeAsBefore(scan)).toBe(1);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const [applied] = await Promise.all([migrateSchema(db, SCHEMA, migrations), writer]);
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
        columns.ruleId.push("");
        columns.variant.push(0);
      }
      const stored = await storeScans(links, columns);
      return stored === undefined ? scans.length : stored.size;
    };
    // Everything the version before stored, sent again to this one (a spool replayed whole): nothing is new.
    expect(await send([...before, ...during])).toBe(0);
    // New scans to this version, one of a visitor the version before saw today.
    const after = [scanAt(now + 100, "after-0"), scanAt(now + 101, "early-0")];
    expect(await send(after)).toBe(2);
    // Sent again to the version before, still running in a rolling upgrade: nothing is stored twice,
    // and its scan of a visitor this version saw today is not a new visitor.
    for (const scan of after) expect(await storeAsBefore(scan)).toBe(0);
    expect(await storeAsBefore(scanAt(now + 102, "after-0"))).toBe(1);
    // And this version's scan of a visitor the version before saw today is not one either.
    expect(await send([scanAt(now + 103, "during-0")])).toBe(1);
    await foldScanDeltas(links);
    // This version leaves the visitors of a day that is open to its close: tomorrow's first partition run.
    await maintainScanPartitions(links, 90, new Date(now + 86_400_000));
    await foldScanDeltas(links);

    const { rows } = await sql<{ narrow: number; raw: number; scans: number; unique: number }>`
      select (select count(*)::int from links.scan_events) as narrow, (select count(*)::int from links.raw_scans) as raw,
        (select coalesce(sum(scans), 0)::int from links.scan_day_rollups where link_id = ${linkId}) as scans,
        (select coalesce(sum(unique_scans), 0)::int from links.scan_day_rollups where link_id = ${linkId}) as unique`.execute(
      db,
    );
    const visitors = before.length + during.length + 1;
    expect(rows[0]).toEqual({
      narrow: before.length + during.length + 1,
      raw: after.length + 1,
      scans: before.length + during.length + after.length + 2,
      unique: visitors,
    });
    // The hourly reads find the scans of both shapes, each once.
    const hours = await hourlyScans(links, linkId, now - 86_400_000, now + 86_400_000);
    expect(hours.reduce((sum, hour) => sum + hour.scans, 0)).toBe(rows[0]!.scans);
  });
});
