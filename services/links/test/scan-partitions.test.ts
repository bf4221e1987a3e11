// Raw scans live in daily partitions that the service makes ahead and drops after the retention, on
// the clock it is given; what outlives them (rollups, day sketches) still answers. Each day that is
// over is closed: its distinct visitors counted from its raw scans.
import { randomUUID } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateSchema, type Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { migrations, SCHEMA } from "../migrations/index.js";
import type { LinksDeps } from "../src/deps.js";
import { decodeDaySketch } from "../src/scans/analytics/day-encoding.js";
import { rangeVisitors } from "../src/scans/analytics/range-visitors.js";
import { NO_VARIANT, type ScanColumns } from "../src/scans/scan-columns.js";
import { timeOrderedScanId } from "../src/scans/recording/scan-id.js";
import { CLOSE_LOCK_TIMEOUT, firstKeptDay, maintainScanPartitions } from "../src/scans/analytics/scan-partitions.js";
import { foldScanDeltas } from "../src/scans/analytics/scan-fold.js";
import { storeScans } from "../src/scans/analytics/scan-store.js";
import { summarizeScans } from "../src/scans/analytics/scans.repository.js";
import type { LinksTables } from "../src/tables.js";

const at = (day: string, hour = 12) => new Date(`${day}T${String(hour).padStart(2, "0")}:00:00Z`);

let database: Database;
let db: Kysely<LinksTables>;
beforeAll(async () => {
  database = await openTestDatabase();
  await migrateSchema(database.db, SCHEMA, migrations);
  db = database.db.withSchema(SCHEMA) as Kysely<LinksTables>;
});
afterAll(() => database?.close());

async function newLink(): Promise<string> {
  const id = randomUUID();
  await sql`insert into links.links (id, account_id, slug, destination_url, status, created_at, updated_at)
    values (${id}, ${randomUUID()}, ${`p${id.slice(0, 8)}`}, 'https://example.com/', 'active', now(), now())`.execute(
    db,
  );
  return id;
}

function scansOf(linkId: string, times: Date[], visitor: (i: number) => string): ScanColumns {
  return {
    id: times.map((time) => timeOrderedScanId(time.getTime())),
    linkId: times.map(() => linkId),
    scannedAtMs: times.map((time) => time.getTime()),
    country: times.map(() => "DE"),
    deviceType: times.map(() => "mobile"),
    os: times.map(() => "iOS"),
    browser: times.map(() => "Safari"),
    referrerHost: times.map(() => ""),
    visitorKey: times.map((_, i) => visitor(i)),
    ruleId: times.map(() => ""),
    variant: times.map(() => NO_VARIANT),
  };
}

async function partitions(table: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = ${`links.${table}`}::regclass order by 1`.execute(db);
  return rows.map((row) => row.name);
}

/** What a batch's statement holds from its start until it commits: links.scan_day_close, FOR SHARE. */
async function batchReadingTheClose(): Promise<{ commit(): Promise<void> }> {
  let readOpen!: () => void;
  let commit!: () => void;
  const read = new Promise<void>((resolve) => (readOpen = resolve));
  const committed = new Promise<void>((resolve) => (commit = resolve));
  const batch = db.transaction().execute(async (trx) => {
    await sql`select closed_until from links.scan_day_close for share`.execute(trx);
    readOpen();
    await committed;
  });
  await read;
  return {
    commit: () => {
      commit();
      return batch;
    },
  };
}

async function closedUntil(): Promise<string> {
  const { rows } = await sql<{ closed: string }>`
    select to_char(closed_until, 'YYYY-MM-DD') as closed from links.scan_day_close`.execute(db);
  return rows[0]!.closed;
}

describe("scan partitions", () => {
  it("read a day's visitors whole while its partition lives, though it is before the window", async () => {
    const own = await openTestDatabase();
    try {
      await migrateSchema(own.db, SCHEMA, migrations);
      const ownDb = own.db.withSchema(SCHEMA) as Kysely<LinksTables>;
      // The migration's first partition runs from the beginning of time: every day in it is still raw.
      await maintainScanPartitions(ownDb, 1, new Date());
      expect(await firstKeptDay(ownDb)).toBe("0001-01-01");
      // Once it is past the retention it goes, and the window's first day is the first one kept.
      const run = await maintainScanPartitions(ownDb, 1, new Date(Date.now() + 10 * 86_400_000));
      expect(await firstKeptDay(ownDb)).toBe(run!.keptFrom);
    } finally {
      await own.close();
    }
  });

  it("are made ahead of today and dropped whole once past the retention, with the window scans are stored in", async () => {
    const first = await maintainScanPartitions(db, 2, at("2030-03-10"));
    expect(first?.keptFrom).toBe("2030-03-08");
    // The tables of before the raw rows get none, and lose theirs past the retention.
    expect(await partitions("scans")).toEqual([]);
    expect(await partitions("scan_events")).toEqual([]);
    expect(await partitions("scan_visitor_days")).toEqual([]);
    expect(await partitions("raw_scans")).toEqual(
      expect.arrayContaining([
        "raw_scans_20300308",
        "raw_scans_20300309",
        "raw_scans_20300310",
        "raw_scans_20300311",
        "raw_scans_20300312",
        "raw_scans_20300313",
      ]),
    );
    expect(await partitions("raw_scans")).not.toContain("raw_scans_20300314");

    const linkId = await newLink();
    const batch = scansOf(linkId, [at("2030-03-08"), at("2030-03-10"), at("2030-03-10", 13)], (i) => `v${i}`);
    expect(await storeScans(db, batch)).toBeUndefined();
    // Sent again: nothing is stored twice.
    expect(await storeScans(db, batch)).toEqual(new Set());

    // Two days on: the 8th and 9th are past the retention and go, with the 8th's scan; days ahead are added.
    const later = await maintainScanPartitions(db, 2, at("2030-03-12"));
    expect(later?.dropped).toEqual(expect.arrayContaining(["raw_scans_20300308", "raw_scans_20300309"]));
    expect(await partitions("raw_scans")).not.toContain("raw_scans_20300309");
    expect(await partitions("raw_scans")).toContain("raw_scans_20300315");
    expect(await partitions("raw_scans")).not.toContain("raw_scans_20300316");
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from links.raw_scans where link = (select number from links.links where id = ${linkId})`.execute(
      db,
    );
    expect(rows).toEqual([{ n: 2 }]);
    // A batch of the dropped days (a spool replayed too late) is not stored, and not counted again,
    // but reported as expired (qrp_scans_dropped_total{reason="expired"}).
    const expired: number[] = [];
    const late = scansOf(linkId, [at("2030-03-09"), at("2030-03-12")], (i) => `late${i}`);
    expect(await storeScans(db, late, (scans) => expired.push(scans))).toEqual(new Set([late.id[1]]));
    // Nor is a scan beyond the partitions made ahead.
    expect(
      await storeScans(
        db,
        scansOf(linkId, [at("2030-03-20")], () => "ahead"),
        (scans) => expired.push(scans),
      ),
    ).toEqual(new Set());
    expect(expired).toEqual([1, 1]);
    // The rollups keep every scan stored, the dropped days' included.
    await foldScanDeltas(db);
    const summary = await summarizeScans(db, linkId, "2030-03-01", "2030-03-31");
    expect(summary.daily).toEqual([
      { day: "2030-03-08", scans: 1, uniqueScans: 1 },
      { day: "2030-03-10", scans: 2, uniqueScans: 2 },
      { day: "2030-03-12", scans: 1, uniqueScans: 1 },
    ]);
  });

  it("keep a day's visitors as sketches once dropped, so distinct visitors over old days are still estimated", async () => {
    await maintainScanPartitions(db, 0, at("2031-05-02"));
    const linkId = await newLink();
    // 300 visitors on the 1st, 200 on the 2nd of whom 100 came on the 1st too: 400 in all.
    const first = Array.from({ length: 300 }, (_, i) => at("2031-05-01", i % 24));
    const second = Array.from({ length: 200 }, (_, i) => at("2031-05-02", i % 12));
    await storeScans(
      db,
      scansOf(linkId, first, (i) => `visitor-${i}`),
    );
    await storeScans(
      db,
      scansOf(linkId, second, (i) => `visitor-${i + 200}`),
    );
    await foldScanDeltas(db);
    const deps = { db, exactVisitorDays: 20_000 } as LinksDeps;
    const range = { from: "2031-05-01", to: "2031-05-02", today: "2031-05-02" };
    const daily = async () => (await summarizeScans(db, linkId, range.from, range.to)).daily;
    expect(await rangeVisitors(deps, linkId, range, daily)).toBe(400);

    // Retention 0 still keeps yesterday; two days on, the 1st and 2nd are gone.
    const run = await maintainScanPartitions(db, 0, at("2031-05-04"));
    expect(run?.keptFrom).toBe("2031-05-03");
    expect(run?.dropped).toEqual(expect.arrayContaining(["raw_scans_20310501", "raw_scans_20310502"]));
    const { rows: sketches } = await sql<{ day: string; sketch: Uint8Array }>`
      select to_char(day, 'YYYY-MM-DD') as day, sketch from links.scan_link_days
      where link_id = ${linkId} and sketch is not null order by 1`.execute(db);
    expect(sketches.map(({ day, sketch }) => ({ day, visitors: decodeDaySketch(sketch).visitors }))).toEqual([
      { day: "2031-05-01", visitors: 300 },
      { day: "2031-05-02", visitors: 200 },
    ]);
    const estimated = await rangeVisitors(deps, linkId, { ...range, today: "2031-05-04" }, daily);
    expect(Math.abs(estimated - 400) / 400).toBeLessThan(0.05);
    expect((await daily()).map((day) => day.uniqueScans)).toEqual([300, 200]);
  });

  it("close each day that is over, counting its visitors from its raw scans, and count a late scan's visitor as it is stored", async () => {
    await maintainScanPartitions(db, 3, at("2032-07-01"));
    const linkId = await newLink();
    const daily = async () => (await summarizeScans(db, linkId, "2032-07-01", "2032-07-02")).daily;
    await storeScans(
      db,
      scansOf(linkId, [at("2032-07-01", 9), at("2032-07-01", 10)], (i) => `regular-${i}`),
    );
    await storeScans(
      db,
      scansOf(linkId, [at("2032-07-01", 11), at("2032-07-01", 12)], () => "twice"),
    );
    // What a writer of the version before adds, which counted its own visitor.
    await sql`insert into links.scan_deltas (link_id, account_id, day, country, device_type, os, browser, referrer_host, rule, scans, visitors)
      select id, account_id, '2032-07-01', 'DE', 'mobile', 'iOS', 'Safari', '', '', 0, 1 from links.links where id = ${linkId}`.execute(
      db,
    );
    await foldScanDeltas(db);
    const counted = async () => {
      const { rows } = await sql<{ n: number }>`
        select (select coalesce(sum(links.scan_day_unique_scans(counts)), 0) from links.scan_link_days
          where link_id = ${linkId} and day = '2032-07-01')
        + (select coalesce(sum(visitors), 0) from links.scan_deltas where link_id = ${linkId} and day = '2032-07-01') as n`.execute(
        db,
      );
      return Number(rows[0]!.n);
    };
    const window = async () =>
      (
        await sql<{ closed: string; recounted: string }>`
          select to_char(closed_until, 'YYYY-MM-DD') as closed, to_char(recounted_until, 'YYYY-MM-DD') as recounted
          from links.scan_day_close, links.scan_window`.execute(db)
      ).rows[0];
    // This version's writers leave an open day's visitors to its close: the rollups count the one
    // added by hand, and a reader of the day counts its raw scans' three.
    expect(await counted()).toBe(1);
    expect(await daily()).toEqual([{ day: "2032-07-01", scans: 4, uniqueScans: 3 }]);
    // The day is not over: a run keeps its count.
    await maintainScanPartitions(db, 3, at("2032-07-01", 23));
    expect(await counted()).toBe(1);
    // Once it is, the next run closes it and counts it from the raw scans, folded or not, and only
    // once; readers then take the rollups' count.
    await maintainScanPartitions(db, 3, at("2032-07-02", 1));
    expect(await window()).toEqual({ closed: "2032-07-02", recounted: "2032-07-02" });
    expect(await counted()).toBe(3);
    expect(await daily()).toEqual([{ day: "2032-07-01", scans: 4, uniqueScans: 3 }]);
    const adjust = (visitors: number) =>
      sql`insert into links.scan_deltas (link_id, account_id, day, country, device_type, os, browser, referrer_host, rule, scans, visitors)
        select id, account_id, '2032-07-01', 'DE', 'mobile', 'iOS', 'Safari', '', '', 0, ${visitors} from links.links where id = ${linkId}`.execute(
        db,
      );
    await adjust(1);
    expect(await daily()).toEqual([{ day: "2032-07-01", scans: 4, uniqueScans: 4 }]);
    await adjust(-1);
    // The correction adds no value to the day's breakdowns.
    await foldScanDeltas(db);
    expect((await summarizeScans(db, linkId, "2032-07-01", "2032-07-01")).breakdowns).toEqual(
      expect.not.arrayContaining([expect.objectContaining({ scans: 0 })]),
    );
    await maintainScanPartitions(db, 3, at("2032-07-02", 2));
    expect(await daily()).toEqual([{ day: "2032-07-01", scans: 4, uniqueScans: 3 }]);
    // Late scans of the closed day: its writer counts a visitor the day has not seen, and only once.
    await storeScans(
      db,
      scansOf(linkId, [at("2032-07-01", 20), at("2032-07-01", 21), at("2032-07-01", 22)], (i) =>
        i === 0 ? "regular-1" : "late",
      ),
    );
    await foldScanDeltas(db);
    expect(await daily()).toEqual([{ day: "2032-07-01", scans: 7, uniqueScans: 4 }]);
    // A visitor's second scan of an open day is not a new visitor, a scan sent again is not stored twice.
    const again = scansOf(linkId, [at("2032-07-02", 3), at("2032-07-02", 4)], () => "regular-0");
    expect(await storeScans(db, again)).toBeUndefined();
    expect(await storeScans(db, again)).toEqual(new Set());
    await foldScanDeltas(db);
    expect(await daily()).toEqual([
      { day: "2032-07-01", scans: 7, uniqueScans: 4 },
      { day: "2032-07-02", scans: 2, uniqueScans: 1 },
    ]);
  });

  // Two connections: the embedded default has one, on which a batch and a run cannot overlap.
  it.skipIf(!process.env.DATABASE_URL)("close a day only once no batch that read it open is uncommitted", async () => {
    await maintainScanPartitions(db, 3, at("2032-08-01"));
    const batch = await batchReadingTheClose();
    let closed = false;
    const run = maintainScanPartitions(db, 3, at("2032-08-02", 1)).then(() => (closed = true));
    // The run waits on the batch's lock, and has not closed the day.
    for (;;) {
      const { rows } = await sql<{ waiting: number }>`
        select count(*)::int as waiting from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query like '%closed_until%'`.execute(db);
      if (rows[0]!.waiting > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(closed).toBe(false);
    expect(await closedUntil()).toBe("2032-08-01");
    await batch.commit();
    await run;
    expect(closed).toBe(true);
  });

  it.skipIf(!process.env.DATABASE_URL)(
    `leave the days open and make the partitions when batches hold the window past ${CLOSE_LOCK_TIMEOUT}`,
    async () => {
      await maintainScanPartitions(db, 3, at("2032-09-01"));
      const batch = await batchReadingTheClose();
      try {
        const run = await maintainScanPartitions(db, 3, at("2032-09-02", 1));
        expect(run!.created).toContain("raw_scans_20320905");
        expect(await closedUntil()).toBe("2032-09-01");
      } finally {
        await batch.commit();
      }
      // The next run closes them.
      await maintainScanPartitions(db, 3, at("2032-09-02", 2));
      expect(await closedUntil()).toBe("2032-09-02");
    },
    30_000,
  );

  it("count the closed days a run closed but did not count, on the next run", async () => {
    const linkId = await newLink();
    await maintainScanPartitions(db, 3, at("2032-07-03"));
    await storeScans(
      db,
      scansOf(linkId, [at("2032-07-03", 9), at("2032-07-03", 10), at("2032-07-03", 11)], (i) => `visitor-${i % 2}`),
    );
    // A run that closed the day and stopped before counting it (its process ended between the two).
    await sql`update links.scan_day_close set closed_until = '2032-07-04'`.execute(db);
    const daily = async () => (await summarizeScans(db, linkId, "2032-07-03", "2032-07-03")).daily;
    // Readers count the closed day's visitors from its raw scans until it is counted.
    expect(await daily()).toEqual([{ day: "2032-07-03", scans: 3, uniqueScans: 2 }]);
    await maintainScanPartitions(db, 3, at("2032-07-04", 1));
    await foldScanDeltas(db);
    await sql`delete from links.raw_scans where link = (select number from links.links where id = ${linkId})`.execute(
      db,
    );
    // Counted now: the rollups hold the count without the raw scans.
    expect(await daily()).toEqual([{ day: "2032-07-03", scans: 3, uniqueScans: 2 }]);
  });
});
