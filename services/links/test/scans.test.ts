import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, createClient, type Client } from "@connectrpc/connect";
import { AnalyticsInterval, AnalyticsService, OutboxService, ScanSchema, type Scan } from "@qrplatform/api/links";
import { sql } from "kysely";
import { inProcessTransport } from "@qrplatform/platform";
import { decodeDaySketch, encodeDayCounts } from "../src/scans/analytics/day-encoding.js";
import { DeltaFolder } from "../src/scans/analytics/delta-folder.js";
import { scanColumnsOf, type ScanColumns } from "../src/scans/scan-columns.js";
import type { ScanSink } from "../src/scans/scan-sink.js";
import { foldScanDeltas } from "../src/scans/analytics/scan-fold.js";
import { storeScans } from "../src/scans/analytics/scan-store.js";
import { countVisitorsUpTo, dayRegisters, summarizeScans } from "../src/scans/analytics/scans.repository.js";
import { errorOf } from "./support/errors.js";
import { credentials, logger, startLinks, type LinksStack } from "./support/links-stack.js";

// The analytics clock: "today" is 2026-11-23 (UTC), late in the day.
const NOW = new Date("2026-11-23T22:30:00Z");

let stack: LinksStack;
let analytics: Client<typeof AnalyticsService>;
beforeAll(async () => {
  stack = await startLinks({ now: () => NOW });
  analytics = createClient(
    AnalyticsService,
    inProcessTransport({ modules: [stack.module], credentials, logger, token: credentials.serviceToken }),
  );
});
afterAll(() => stack?.close());

async function newLink(accountId = randomUUID()) {
  const { link } = await stack.links.createLink({ accountId, destinationUrl: "https://example.com/" });
  return { accountId, linkId: link!.id };
}

function scan(linkId: string, at: string, fields: Partial<Omit<Scan, "$typeName" | "scanTime">> = {}): Scan {
  return create(ScanSchema, {
    id: randomUUID(),
    linkId,
    scanTime: timestampFromDate(new Date(at)),
    country: "DE",
    deviceType: "mobile",
    os: "iOS",
    browser: "Mobile Safari",
    referrerHost: "",
    visitorKey: "visitor-a",
    ...fields,
  });
}

describe("recording scans", () => {
  it("stores each scan once, however often its batch is sent", async () => {
    const { accountId, linkId } = await newLink();
    const batch = [
      scan(linkId, "2026-11-20T10:00:00Z"),
      scan(linkId, "2026-11-20T11:00:00Z"),
      scan(linkId, "2026-11-21T09:00:00Z"),
    ];
    expect((await stack.redirects.recordScans({ scans: batch })).recordedCount).toBe(3);
    expect((await stack.redirects.recordScans({ scans: batch })).recordedCount).toBe(0);
    // A retry that overlaps a newer batch counts only the new scan.
    const retry = [...batch.slice(1), scan(linkId, "2026-11-21T12:00:00Z")];
    expect((await stack.redirects.recordScans({ scans: retry })).recordedCount).toBe(1);

    const { totals } = await analytics.getScanTotals({ accountId, linkIds: [linkId] });
    expect(totals).toEqual({ [linkId]: 4n });
    const summary = await analytics.getLinkAnalytics({
      accountId,
      linkId,
      fromDate: "2026-11-20",
      toDate: "2026-11-21",
    });
    expect(summary.totalScans).toBe(4n);
    expect(summary.daily.map((d) => [d.date, d.scans])).toEqual([
      ["2026-11-20", 2n],
      ["2026-11-21", 2n],
    ]);
  });

  it("counts concurrent batches for the same link and day exactly", async () => {
    const { accountId, linkId } = await newLink();
    const batches = Array.from({ length: 8 }, (_, i) =>
      Array.from({ length: 25 }, (_, j) =>
        scan(linkId, "2026-11-22T08:00:00Z", { visitorKey: `v${(i * 25 + j) % 40}`, country: j % 2 ? "FR" : "DE" }),
      ),
    );
    const results = await Promise.all(batches.map((scans) => stack.redirects.recordScans({ scans })));
    expect(results.reduce((sum, r) => sum + r.recordedCount, 0)).toBe(200);
    const summary = await analytics.getLinkAnalytics({
      accountId,
      linkId,
      fromDate: "2026-11-22",
      toDate: "2026-11-22",
    });
    expect(summary).toMatchObject({ totalScans: 200n, uniqueScans: 40n });
    expect(summary.daily[0]).toMatchObject({ scans: 200n, uniqueScans: 40n });
    expect(summary.countries.map((c) => [c.value, c.scans])).toEqual([
      ["DE", 104n],
      ["FR", 96n],
    ]);
  });

  it("stores a same-process recorder's columns without the gRPC round trip, once each, as RecordScans does", async () => {
    const { accountId, linkId } = await newLink();
    const batch = [
      scan(linkId, "2026-11-22T08:00:00Z"),
      scan(linkId, "2026-11-22T09:00:00Z", { visitorKey: "visitor-b" }),
    ];
    expect(await stack.module.storeCheckedScans(scanColumnsOf(batch))).toBe(2);
    expect(await stack.module.storeCheckedScans(scanColumnsOf(batch))).toBe(0);
    expect((await stack.redirects.recordScans({ scans: batch })).recordedCount).toBe(0);
    expect((await analytics.getScanTotals({ accountId, linkIds: [linkId] })).totals).toEqual({ [linkId]: 2n });
  });

  it("turns ids in upper case into their lower-case spelling with the batch's columns, so a scan is stored once however it is spelled", async () => {
    const { accountId, linkId } = await newLink();
    const shouted = scan(linkId.toUpperCase(), "2026-11-22T08:00:00Z");
    shouted.id = shouted.id.toUpperCase();
    // Beside a scan of a link that does not exist, so the statement answers the ids it stored.
    expect(
      await stack.module.storeCheckedScans(scanColumnsOf([shouted, scan(randomUUID(), "2026-11-22T08:00:00Z")])),
    ).toBe(1);
    const again = create(ScanSchema, { ...shouted, id: shouted.id.toLowerCase(), linkId });
    expect((await stack.redirects.recordScans({ scans: [again] })).recordedCount).toBe(0);
    expect((await analytics.getScanTotals({ accountId, linkIds: [linkId] })).totals).toEqual({ [linkId]: 1n });
  });

  it("tells each of several batches sent at once how many of its own scans were new, a scan sent twice counting once", async () => {
    const { accountId, linkId } = await newLink();
    const batches = Array.from({ length: 4 }, (_, i) =>
      Array.from({ length: 30 }, (_, j) => scan(linkId, "2026-11-22T08:00:00Z", { visitorKey: `v${i}-${j}` })),
    );
    const again = [...batches[0]!.slice(0, 10), scan(linkId, "2026-11-22T08:00:00Z")];
    const counts = await Promise.all(
      [...batches, again].map((scans) => stack.module.storeCheckedScans(scanColumnsOf(scans))),
    );
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(121);
    expect(counts.slice(1, 4)).toEqual([30, 30, 30]);
    expect([counts[0], counts[4]].sort()).toEqual(counts[0] === 30 ? [1, 30] : [11, 20]);
    expect((await analytics.getScanTotals({ accountId, linkIds: [linkId] })).totals).toEqual({ [linkId]: 121n });
  });

  it("stores names with quotes, backslashes and braces exactly as sent", async () => {
    const { accountId, linkId } = await newLink();
    const names = ['Say "hi" OS', "C:\\Windows\\", "{braced, list}", "NULL"];
    const batch = names.map((os, i) =>
      scan(linkId, "2026-11-22T08:00:00Z", { os, browser: names[(i + 1) % names.length]! }),
    );
    expect((await stack.redirects.recordScans({ scans: batch })).recordedCount).toBe(4);
    const summary = await analytics.getLinkAnalytics({
      accountId,
      linkId,
      fromDate: "2026-11-22",
      toDate: "2026-11-22",
    });
    expect(summary.operatingSystems.map((entry) => entry.value).sort()).toEqual([...names].sort());
    expect(summary.browsers.map((entry) => entry.value).sort()).toEqual([...names].sort());
  });

  it("drops scans of links that do not exist and refuses malformed scans", async () => {
    const { linkId } = await newLink();
    const recorded = await stack.redirects.recordScans({
      scans: [scan(randomUUID(), "2026-11-22T08:00:00Z"), scan(linkId, "2026-11-22T08:00:00Z")],
    });
    expect(recorded.recordedCount).toBe(1);

    const bad = await errorOf(
      stack.redirects.recordScans({
        scans: [scan(linkId, "2026-11-22T08:00:00Z", { deviceType: "toaster", country: "Germany" })],
      }),
    );
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.fields.map((f) => f.field).sort()).toEqual(["0.country", "0.device_type"]);
    // A malformed id is refused at the door, before the scan's own rules.
    const malformed = await errorOf(
      stack.redirects.recordScans({ scans: [scan(linkId, "2026-11-22T08:00:00Z", { id: "x" })] }),
    );
    expect(malformed.code).toBe(Code.InvalidArgument);
    expect(malformed.fields.map((f) => f.field)).toEqual(["scans.0.id"]);
  });

  it("leave the service through its scan sink, whose answer is the count RecordScans gives", async () => {
    const received: ScanColumns[] = [];
    const sink: ScanSink = {
      async store(scans) {
        received.push(scans);
        // As if the sink had seen the first scan already.
        return scans.id.length - 1;
      },
    };
    const other = await startLinks({ now: () => NOW, scanSink: sink });
    try {
      const { link } = await other.links.createLink({
        accountId: randomUUID(),
        destinationUrl: "https://example.com/",
      });
      const batch = [scan(link!.id, "2026-11-22T08:00:00Z"), scan(link!.id, "2026-11-22T09:00:00Z", { country: "FR" })];
      expect((await other.redirects.recordScans({ scans: batch })).recordedCount).toBe(1);
      expect(received.map((columns) => [columns.id, columns.country])).toEqual([
        [batch.map((s) => s.id), ["DE", "FR"]],
      ]);
      expect(await other.module.storeCheckedScans(scanColumnsOf(batch))).toBe(1);
      expect(received).toHaveLength(2);
      // Nothing else stored them.
      const rows = await sql<{
        n: number;
      }>`select count(*)::int as n from links.raw_scans where link = (select number from links.links where id = ${link!.id})`.execute(
        other.database.db,
      );
      expect(rows.rows[0]!.n).toBe(0);
    } finally {
      await other.close();
    }
  });
});

describe("link analytics", () => {
  it("zero-fills every day, counts a visitor once over the range and once a day", async () => {
    const { accountId, linkId } = await newLink();
    await stack.redirects.recordScans({
      scans: [
        scan(linkId, "2026-11-01T00:00:00Z", { visitorKey: "a" }),
        scan(linkId, "2026-11-01T23:59:59.999Z", { visitorKey: "a" }),
        scan(linkId, "2026-11-03T12:00:00Z", { visitorKey: "a" }),
        scan(linkId, "2026-11-03T12:00:01Z", { visitorKey: "b" }),
        // Outside the range asked for.
        scan(linkId, "2026-10-31T23:59:59.999Z", { visitorKey: "c" }),
        scan(linkId, "2026-11-04T00:00:00Z", { visitorKey: "d" }),
      ],
    });
    const summary = await analytics.getLinkAnalytics({
      accountId,
      linkId,
      fromDate: "2026-11-01",
      toDate: "2026-11-03",
    });
    expect(summary.daily.map((d) => [d.date, d.scans, d.uniqueScans])).toEqual([
      ["2026-11-01", 2n, 1n],
      ["2026-11-02", 0n, 0n],
      ["2026-11-03", 2n, 2n],
    ]);
    expect(summary.totalScans).toBe(4n);
    expect(summary.uniqueScans).toBe(2n);
  });

  it("breaks scans down by every dimension, most first, naming what could not be told", async () => {
    const { accountId, linkId } = await newLink();
    await stack.redirects.recordScans({
      scans: [
        scan(linkId, "2026-11-23T01:00:00Z", {
          country: "",
          deviceType: "desktop",
          os: "Windows",
          browser: "Chrome",
          referrerHost: "news.example",
        }),
        scan(linkId, "2026-11-23T02:00:00Z", {
          country: "US",
          deviceType: "mobile",
          os: "Android",
          browser: "Chrome",
          referrerHost: "news.example",
        }),
        scan(linkId, "2026-11-23T03:00:00Z", {
          country: "US",
          deviceType: "mobile",
          os: "",
          browser: "",
          referrerHost: "",
        }),
      ],
    });
    const summary = await analytics.getLinkAnalytics({ accountId, linkId, fromDate: "", toDate: "" });
    const values = (entries: { value: string; scans: bigint }[]) => entries.map((e) => [e.value, Number(e.scans)]);
    expect(values(summary.countries)).toEqual([
      ["US", 2],
      ["unknown", 1],
    ]);
    expect(values(summary.devices)).toEqual([
      ["mobile", 2],
      ["desktop", 1],
    ]);
    expect(values(summary.operatingSystems)).toEqual([
      ["Android", 1],
      ["Windows", 1],
      ["unknown", 1],
    ]);
    expect(values(summary.browsers)).toEqual([
      ["Chrome", 2],
      ["unknown", 1],
    ]);
    expect(values(summary.referrers)).toEqual([
      ["news.example", 2],
      ["direct", 1],
    ]);
  });

  it("folds values past the fiftieth into one 'other' entry", async () => {
    const { accountId, linkId } = await newLink();
    const scans = Array.from({ length: 60 }, (_, i) =>
      scan(linkId, "2026-11-23T05:00:00Z", { referrerHost: `site${String(i).padStart(2, "0")}.example` }),
    );
    scans.push(scan(linkId, "2026-11-23T05:00:00Z", { referrerHost: "site59.example" }));
    await stack.redirects.recordScans({ scans });
    const { referrers } = await analytics.getLinkAnalytics({
      accountId,
      linkId,
      fromDate: "2026-11-23",
      toDate: "2026-11-23",
    });
    expect(referrers).toHaveLength(51);
    expect(referrers[0]).toMatchObject({ value: "site59.example", scans: 2n });
    expect(referrers[1]).toMatchObject({ value: "site00.example", scans: 1n });
    expect(referrers[50]).toMatchObject({ value: "other", scans: 10n });
  });

  it("defaults to the 30 days ending today (UTC) and to today when only from is given", async () => {
    const { accountId, linkId } = await newLink();
    const whole = await analytics.getLinkAnalytics({ accountId, linkId, fromDate: "", toDate: "" });
    expect(whole.daily).toHaveLength(30);
    expect([whole.daily[0]!.date, whole.daily.at(-1)!.date]).toEqual(["2026-10-25", "2026-11-23"]);
    const fromOnly = await analytics.getLinkAnalytics({ accountId, linkId, fromDate: "2026-11-20", toDate: "" });
    expect(fromOnly.daily.map((d) => d.date)).toEqual(["2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23"]);
    const toOnly = await analytics.getLinkAnalytics({ accountId, linkId, fromDate: "", toDate: "2024-03-01" });
    expect([toOnly.daily[0]!.date, toOnly.daily.at(-1)!.date]).toEqual(["2024-02-01", "2024-03-01"]);
    const leapYear = await analytics.getLinkAnalytics({
      accountId,
      linkId,
      fromDate: "2024-01-01",
      toDate: "2024-12-31",
    });
    expect(leapYear.daily).toHaveLength(366);
  });

  it("answers the first and last days of the calendar it keeps", async () => {
    const { accountId, linkId } = await newLink();
    const first = await analytics.getLinkAnalytics({ accountId, linkId, fromDate: "2000-01-01", toDate: "2000-01-02" });
    expect(first.daily.map((d) => d.date)).toEqual(["2000-01-01", "2000-01-02"]);
    const last = await analytics.getLinkAnalytics({ accountId, linkId, fromDate: "9999-12-30", toDate: "9999-12-31" });
    expect(last.daily.map((d) => d.date)).toEqual(["9999-12-30", "9999-12-31"]);
  });

  it.each([
    ["2026-02-30", "", "from_date", "invalid_date"],
    ["", "23-11-2026", "to_date", "invalid_date"],
    ["2026-11-23T00:00:00Z", "", "from_date", "invalid_date"],
    ["2026-11-10", "2026-11-09", "from_date", "invalid_range"],
    ["2026-11-24", "", "from_date", "invalid_range"],
    ["2025-01-01", "2026-01-02", "from_date", "range_too_long"],
    ["0000-01-01", "2026-01-02", "from_date", "out_of_range"],
    ["0000-01-01", "", "from_date", "out_of_range"],
    ["1999-12-31", "2000-01-01", "from_date", "out_of_range"],
    ["", "0000-01-01", "to_date", "out_of_range"],
  ])("refuses from=%j to=%j on %s (%s)", async (fromDate, toDate, field, reason) => {
    const { accountId, linkId } = await newLink();
    const error = await errorOf(analytics.getLinkAnalytics({ accountId, linkId, fromDate, toDate }));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.fields).toEqual([{ field, reason }]);
  });

  it("answers only the link's own account", async () => {
    const { accountId, linkId } = await newLink();
    await stack.redirects.recordScans({ scans: [scan(linkId, "2026-11-23T05:00:00Z")] });
    const stranger = randomUUID();
    expect(
      (await errorOf(analytics.getLinkAnalytics({ accountId: stranger, linkId, fromDate: "", toDate: "" }))).code,
    ).toBe(Code.NotFound);
    expect((await analytics.getScanTotals({ accountId: stranger, linkIds: [linkId] })).totals).toEqual({});
    expect((await analytics.getScanTotals({ accountId, linkIds: [linkId, randomUUID()] })).totals).toEqual({
      [linkId]: 1n,
    });
    // Malformed ids name nothing: refused before any query.
    expect((await errorOf(analytics.getScanTotals({ accountId, linkIds: [linkId, "not-a-uuid"] }))).code).toBe(
      Code.InvalidArgument,
    );
    expect(
      (await errorOf(analytics.getLinkAnalytics({ accountId, linkId: "nope", fromDate: "", toDate: "" }))).code,
    ).toBe(Code.InvalidArgument);
  });

  it("keeps the scans of a deleted link readable by its account", async () => {
    const { accountId, linkId } = await newLink();
    await stack.redirects.recordScans({ scans: [scan(linkId, "2026-11-23T05:00:00Z")] });
    await stack.links.deleteLink({ accountId, linkId });
    const summary = await analytics.getLinkAnalytics({ accountId, linkId, fromDate: "", toDate: "" });
    expect(summary.totalScans).toBe(1n);
  });
});

describe("hourly analytics", () => {
  const HOUR = AnalyticsInterval.HOUR;

  it("count scans per UTC hour from the raw scans, zero-filled, each hour's visitors distinct within it", async () => {
    const { accountId, linkId } = await newLink();
    await stack.redirects.recordScans({
      scans: [
        scan(linkId, "2026-11-22T00:00:00Z", { visitorKey: "a" }),
        scan(linkId, "2026-11-22T00:30:00Z", { visitorKey: "b" }),
        scan(linkId, "2026-11-22T00:59:59.999Z", { visitorKey: "a" }),
        scan(linkId, "2026-11-22T13:15:00Z", { visitorKey: "a" }),
        scan(linkId, "2026-11-23T22:10:00Z", { visitorKey: "c" }),
        // Outside the range asked for.
        scan(linkId, "2026-11-21T23:59:59.999Z", { visitorKey: "d" }),
        scan(linkId, "2026-11-24T00:00:00Z", { visitorKey: "e" }),
      ],
    });
    const summary = await analytics.getLinkAnalytics({
      accountId,
      linkId,
      fromDate: "2026-11-22",
      toDate: "2026-11-23",
      interval: HOUR,
    });
    expect(summary.hourly).toHaveLength(48);
    expect(summary.hourly[0]!.hour).toBe("2026-11-22T00:00:00Z");
    expect(summary.hourly.at(-1)!.hour).toBe("2026-11-23T23:00:00Z");
    const counted = summary.hourly.filter((h) => h.scans > 0n).map((h) => [h.hour, h.scans, h.uniqueScans]);
    expect(counted).toEqual([
      ["2026-11-22T00:00:00Z", 3n, 2n],
      ["2026-11-22T13:00:00Z", 1n, 1n],
      ["2026-11-23T22:00:00Z", 1n, 1n],
    ]);
    // The hours add up to the days, which are the same as without hours.
    const day = (date: string) =>
      summary.hourly.filter((h) => h.hour.startsWith(date)).reduce((sum, h) => sum + h.scans, 0n);
    expect(summary.daily.map((d) => [d.date, d.scans])).toEqual([
      ["2026-11-22", day("2026-11-22")],
      ["2026-11-23", day("2026-11-23")],
    ]);
    expect(summary.totalScans).toBe(5n);
    // Days only, unless hours are asked for.
    for (const interval of [AnalyticsInterval.UNSPECIFIED, AnalyticsInterval.DAY]) {
      const days = await analytics.getLinkAnalytics({
        accountId,
        linkId,
        fromDate: "2026-11-22",
        toDate: "2026-11-23",
        interval,
      });
      expect(days.hourly).toEqual([]);
      expect(days.totalScans).toBe(5n);
    }
  });

  it("cover at most 31 days, from the first day the raw window keeps, which every answer names", async () => {
    const { accountId, linkId } = await newLink();
    const month = await analytics.getLinkAnalytics({
      accountId,
      linkId,
      fromDate: "2026-10-24",
      toDate: "2026-11-23",
      interval: HOUR,
    });
    expect(month.hourly).toHaveLength(31 * 24);
    // The migration's first partition reaches back to the start of time: every day of the calendar is raw.
    expect(month.hourlyAvailableFrom).toBe("2000-01-01");
    const longer = await errorOf(
      analytics.getLinkAnalytics({ accountId, linkId, fromDate: "2026-10-23", toDate: "2026-11-23", interval: HOUR }),
    );
    expect(longer.code).toBe(Code.InvalidArgument);
    expect(longer.fields).toEqual([{ field: "from_date", reason: "range_too_long" }]);
    // The default range (30 days) is within bounds.
    expect(
      (await analytics.getLinkAnalytics({ accountId, linkId, fromDate: "", toDate: "", interval: HOUR })).hourly,
    ).toHaveLength(30 * 24);
    const unknown = await errorOf(
      analytics.getLinkAnalytics({ accountId, linkId, fromDate: "", toDate: "", interval: 7 as AnalyticsInterval }),
    );
    expect(unknown.code).toBe(Code.InvalidArgument);
    expect(unknown.fields).toEqual([{ field: "interval", reason: "invalid_value" }]);
  });

  it("answer only the link's own account", async () => {
    const { accountId, linkId } = await newLink();
    await stack.redirects.recordScans({ scans: [scan(linkId, "2026-11-23T05:00:00Z")] });
    const request = { linkId, fromDate: "2026-11-23", toDate: "2026-11-23", interval: HOUR };
    expect((await errorOf(analytics.getLinkAnalytics({ ...request, accountId: randomUUID() }))).code).toBe(
      Code.NotFound,
    );
    const own = await analytics.getLinkAnalytics({ ...request, accountId });
    expect(own.hourly.filter((h) => h.scans > 0n).map((h) => h.hour)).toEqual(["2026-11-23T05:00:00Z"]);
  });

  it("refuse a range starting before the raw window, whose days keep their daily counts", async () => {
    // A service on a clock years ahead, keeping 3 days of raw scans: the first partition is gone.
    const now = new Date("2031-01-10T12:00:00Z");
    const later = await startLinks({ now: () => now, scanRetentionDays: 3 });
    try {
      const client = createClient(
        AnalyticsService,
        inProcessTransport({ modules: [later.module], credentials, logger, token: credentials.serviceToken }),
      );
      const accountId = randomUUID();
      const { link } = await later.links.createLink({ accountId, destinationUrl: "https://example.com/" });
      const linkId = link!.id;
      await later.redirects.recordScans({ scans: [scan(linkId, "2031-01-07T08:20:00Z")] });
      const kept = await client.getLinkAnalytics({
        accountId,
        linkId,
        fromDate: "2031-01-07",
        toDate: "2031-01-07",
        interval: HOUR,
      });
      expect(kept.hourlyAvailableFrom).toBe("2031-01-07");
      expect(kept.hourly[8]).toMatchObject({ hour: "2031-01-07T08:00:00Z", scans: 1n, uniqueScans: 1n });
      const before = await errorOf(
        client.getLinkAnalytics({ accountId, linkId, fromDate: "2031-01-06", toDate: "2031-01-07", interval: HOUR }),
      );
      expect(before.code).toBe(Code.InvalidArgument);
      expect(before.fields).toEqual([{ field: "from_date", reason: "out_of_range" }]);
      // The raw window is read for the caller's own link only: another account is told no more than "not found".
      const foreign = await errorOf(
        client.getLinkAnalytics({
          accountId: randomUUID(),
          linkId,
          fromDate: "2031-01-06",
          toDate: "2031-01-07",
          interval: HOUR,
        }),
      );
      expect(foreign.code).toBe(Code.NotFound);
      // Days are answered for any range.
      const days = await client.getLinkAnalytics({ accountId, linkId, fromDate: "2031-01-01", toDate: "2031-01-10" });
      expect(days.totalScans).toBe(1n);
    } finally {
      await later.close();
    }
  });
});

describe("analytics per routing rule", () => {
  const rulesOf = async (accountId: string, linkId: string, fromDate = "2026-11-20", toDate = "2026-11-21") =>
    (await analytics.getLinkAnalytics({ accountId, linkId, fromDate, toDate })).rules.map((rule) => ({
      ruleId: rule.ruleId,
      scans: rule.scans,
      variants: rule.variants.map((v) => [v.variant, v.scans]),
    }));

  it("count the scans each rule and each variant of a split decided, and the rest as no rule's, folded or not", async () => {
    const { accountId, linkId } = await newLink();
    const [plain, split] = [randomUUID(), randomUUID()];
    const scans = [
      ...Array.from({ length: 3 }, () => scan(linkId, "2026-11-20T08:00:00Z", { ruleId: plain })),
      ...Array.from({ length: 4 }, (_, i) =>
        scan(linkId, `2026-11-2${i % 2}T09:00:00Z`, { ruleId: split, variant: 0 }),
      ),
      // Upper case names the same rule.
      scan(linkId, "2026-11-21T10:00:00Z", { ruleId: split.toUpperCase(), variant: 1 }),
      scan(linkId, "2026-11-21T10:00:00Z", { ruleId: split, variant: 1 }),
      ...Array.from({ length: 5 }, () => scan(linkId, "2026-11-21T11:00:00Z")),
      // Outside the range: counted on its own day only.
      scan(linkId, "2026-11-22T08:00:00Z", { ruleId: plain }),
    ];
    expect((await stack.redirects.recordScans({ scans: scans.slice(0, 6) })).recordedCount).toBe(6);
    await foldScanDeltas(stack.database.db);
    expect((await stack.redirects.recordScans({ scans: scans.slice(6) })).recordedCount).toBe(9);
    const expected = [
      {
        ruleId: split,
        scans: 6n,
        variants: [
          [0, 4n],
          [1, 2n],
        ],
      },
      { ruleId: "", scans: 5n, variants: [] },
      { ruleId: plain, scans: 3n, variants: [] },
    ];
    // Half folded, half in the deltas, then all folded.
    expect(await rulesOf(accountId, linkId)).toEqual(expected);
    while ((await foldScanDeltas(stack.database.db)) === undefined);
    expect(await rulesOf(accountId, linkId)).toEqual(expected);
    expect(await rulesOf(accountId, linkId, "2026-11-22", "2026-11-22")).toEqual([
      { ruleId: plain, scans: 1n, variants: [] },
    ]);
    // The other breakdowns are as they were: every scan in each.
    const summary = await analytics.getLinkAnalytics({
      accountId,
      linkId,
      fromDate: "2026-11-20",
      toDate: "2026-11-21",
    });
    expect(summary.countries.map((c) => [c.value, c.scans])).toEqual([["DE", 14n]]);
  });

  it("give a link without rules one entry, no rule's, and a range without scans none", async () => {
    const { accountId, linkId } = await newLink();
    await stack.redirects.recordScans({
      scans: [scan(linkId, "2026-11-20T08:00:00Z"), scan(linkId, "2026-11-21T08:00:00Z")],
    });
    expect(await rulesOf(accountId, linkId)).toEqual([{ ruleId: "", scans: 2n, variants: [] }]);
    expect(await rulesOf(accountId, linkId, "2026-11-10", "2026-11-11")).toEqual([]);
    // Scans no rule decided leave nothing in the rule breakdown's rollups.
    while ((await foldScanDeltas(stack.database.db)) === undefined);
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from links.scan_day_values where link_id = ${linkId} and dimension = 'rule'`.execute(
      stack.database.db,
    );
    expect(rows).toEqual([{ n: 0 }]);
  });

  it("refuse a rule id that is no UUID, a variant past 3 and a variant without its rule, naming each field", async () => {
    const { linkId } = await newLink();
    // A malformed id is refused at the door, as every id is.
    const malformed = await errorOf(
      stack.redirects.recordScans({ scans: [scan(linkId, "2026-11-22T08:00:00Z", { ruleId: "rule-1" })] }),
    );
    expect(malformed.code).toBe(Code.InvalidArgument);
    expect(malformed.fields.map((f) => f.field)).toEqual(["scans.0.rule_id"]);
    const error = await errorOf(
      stack.redirects.recordScans({
        scans: [
          scan(linkId, "2026-11-22T08:00:00Z", { ruleId: randomUUID(), variant: 3 }),
          scan(linkId, "2026-11-22T08:00:00Z", { ruleId: randomUUID(), variant: 4 }),
          scan(linkId, "2026-11-22T08:00:00Z", { variant: 0 }),
        ],
      }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.fields.map((f) => f.field).sort()).toEqual(["1.variant", "2.variant"]);
  });
});

describe("rollups written as deltas", () => {
  const deltasLeft = async () =>
    Number(
      (await sql<{ n: number }>`select count(*)::int as n from links.scan_deltas`.execute(stack.database.db)).rows[0]!
        .n,
    );

  it("count every scan once before, while and after the deltas are folded, whoever folds", async () => {
    const { accountId, linkId } = await newLink();
    const batches = Array.from({ length: 6 }, (_, i) =>
      Array.from({ length: 50 }, (_, j) =>
        scan(linkId, `2026-11-2${i % 2}T08:00:00Z`, { visitorKey: `v${j % 30}`, country: j % 3 ? "FR" : "DE" }),
      ),
    );
    // Batches and folds at once, as several links instances would run them.
    await Promise.all([
      ...batches.map((scans) => stack.redirects.recordScans({ scans })),
      foldScanDeltas(stack.database.db),
      foldScanDeltas(stack.database.db),
    ]);
    const expected = async () => {
      expect((await analytics.getScanTotals({ accountId, linkIds: [linkId] })).totals).toEqual({ [linkId]: 300n });
      const summary = await analytics.getLinkAnalytics({
        accountId,
        linkId,
        fromDate: "2026-11-20",
        toDate: "2026-11-21",
      });
      expect(summary).toMatchObject({ totalScans: 300n, uniqueScans: 30n });
      expect(summary.daily.map((d) => [d.date, d.scans, d.uniqueScans])).toEqual([
        ["2026-11-20", 150n, 30n],
        ["2026-11-21", 150n, 30n],
      ]);
      expect(summary.countries.map((c) => [c.value, c.scans])).toEqual([
        ["FR", 198n],
        ["DE", 102n],
      ]);
    };
    await expected();
    while ((await foldScanDeltas(stack.database.db)) === undefined);
    expect(await deltasLeft()).toBe(0);
    await expected();
    // The rollups alone now hold it all.
    const { rows } = await sql<{
      scans: number;
    }>`select scans from links.scan_totals where link_id = ${linkId}`.execute(stack.database.db);
    expect(rows).toEqual([{ scans: 300 }]);
  });

  it("fold a correction of distinct visitors alone, below zero included, without touching scans or breakdowns", async () => {
    const { accountId, linkId } = await newLink();
    await stack.redirects.recordScans({
      scans: Array.from({ length: 6 }, (_, j) => scan(linkId, "2026-11-19T08:00:00Z", { visitorKey: `v${j % 4}` })),
    });
    while ((await foldScanDeltas(stack.database.db)) === undefined);
    const correct = (visitors: number) =>
      sql`insert into links.scan_deltas (link_id, account_id, day, country, device_type, os, browser, referrer_host, scans, visitors)
        values (${linkId}, ${accountId}, '2026-11-19', '', '', '', '', '', 0, ${visitors})`.execute(stack.database.db);
    const read = async () => {
      const summary = await summarizeScans(stack.database.db, linkId, "2026-11-19", "2026-11-19");
      return {
        daily: summary.daily,
        breakdowns: summary.breakdowns.map((b) => `${b.dimension}:${b.value}:${b.scans}`).sort(),
      };
    };
    const before = await read();
    expect(before.daily).toEqual([{ day: "2026-11-19", scans: 6, uniqueScans: 4 }]);
    await correct(-1);
    const corrected = { ...before, daily: [{ day: "2026-11-19", scans: 6, uniqueScans: 3 }] };
    expect(await read()).toEqual(corrected);
    while ((await foldScanDeltas(stack.database.db)) === undefined);
    expect(await read()).toEqual(corrected);
    // Past zero and back: each step counts as it lands, folded or not.
    await correct(-5);
    while ((await foldScanDeltas(stack.database.db)) === undefined);
    expect((await read()).daily).toEqual([{ day: "2026-11-19", scans: 6, uniqueScans: -2 }]);
    await correct(6);
    expect((await read()).daily).toEqual([{ day: "2026-11-19", scans: 6, uniqueScans: 4 }]);
    while ((await foldScanDeltas(stack.database.db)) === undefined);
    expect(await read()).toEqual(before);
    // Corrections scanned nothing: webhooks heard of the six scans once, and the total is theirs.
    const { rows: events } = await sql<{ counts: number[] }>`
      select scan_counts as counts from links.outbox_events where type = 'link.scanned' and ${linkId} = any(link_ids)`.execute(
      stack.database.db,
    );
    expect(events.map((event) => event.counts.map(Number))).toEqual([[6]]);
    const { rows: totals } = await sql<{ scans: number }>`
      select scans::int from links.scan_totals where link_id = ${linkId}`.execute(stack.database.db);
    expect(totals).toEqual([{ scans: 6 }]);
  });

  it("tell webhooks of a fold's scans in one outbox event per account, naming a thousand of its links at most", async () => {
    const outbox = createClient(
      OutboxService,
      inProcessTransport({ modules: [stack.module], credentials, logger, token: credentials.serviceToken }),
    );
    // Earlier tests' events are taken first, as the catalog's relay takes them, so only this fold's are listed.
    for (
      let { events } = await outbox.listOutboxEvents({ pageSize: 1000 });
      events.length > 0;
      { events } = await outbox.listOutboxEvents({ pageSize: 1000 })
    ) {
      await outbox.acknowledgeOutboxEvents({ eventIds: events.map((event) => event.id) });
    }
    const [busy, quiet] = [randomUUID(), randomUUID()];
    const links = [
      ...Array.from({ length: 1001 }, (_, i) => ({ linkId: randomUUID(), accountId: busy, scans: 1 + (i % 3) })),
      { linkId: randomUUID(), accountId: quiet, scans: 7 },
    ];
    // Stored as a links instance stores them, two combinations of values per link.
    await sql`
      insert into links.scan_deltas (link_id, account_id, day, country, device_type, os, browser, referrer_host, scans, visitors)
      select link_id, account_id, '2026-11-23', country, 'mobile', 'iOS', 'Mobile Safari', '', scans, 0
      from unnest(${links.map((l) => l.linkId)}::uuid[], ${links.map((l) => l.accountId)}::uuid[], ${links.map((l) => l.scans)}::int[]) as d (link_id, account_id, scans)
      cross join (values ('DE'), ('FR')) as c (country)`.execute(stack.database.db);
    while ((await foldScanDeltas(stack.database.db)) === undefined);

    const { events } = await outbox.listOutboxEvents({ pageSize: 1000 });
    expect(events.every((event) => event.type === "link.scanned")).toBe(true);
    const sizes = (accountId: string) =>
      events
        .filter((event) => event.accountId === accountId)
        .map((event) => event.linkScans.length)
        .sort((a, b) => a - b);
    expect(sizes(busy)).toEqual([1, 1000]);
    expect(sizes(quiet)).toEqual([1]);
    const counted = events.flatMap((event) => event.linkScans.map((scans) => [scans.linkId, scans.scanCount] as const));
    expect(new Map(counted)).toEqual(new Map(links.map((l) => [l.linkId, BigInt(2 * l.scans)])));
    expect(counted).toHaveLength(links.length);
  });

  it("are folded by the service itself soon after a batch", async () => {
    const { linkId } = await newLink();
    await stack.redirects.recordScans({ scans: [scan(linkId, "2026-11-23T05:00:00Z")] });
    // "Soon" is about a second; the deadline leaves room for a database shared with other test files,
    // and the next case starts only once this fold is done.
    const deadline = Date.now() + 20_000;
    while ((await deltasLeft()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await deltasLeft()).toBe(0);
  });

  it("are vacuumed away once enough of them were folded, so folds and readers walk live rows only", async () => {
    const { linkId } = await newLink();
    // Stored as a links instance stores them, not through the service, whose own folder would fold them.
    // Each scan another visitor's: one visitor's scans of one millisecond may share a key (ADR 14).
    const storeDeltas = (count: number, from: number) => {
      const scans = Array.from({ length: count }, (_, i) =>
        scan(linkId, "2026-11-23T05:00:00Z", { referrerHost: `r${from + i}.example`, visitorKey: `v${from + i}` }),
      );
      return storeScans(stack.database.db, scanColumnsOf(scans));
    };
    const pages = async () =>
      Number(
        (
          await sql<{ n: number }>`select pg_relation_size('links.scan_deltas')::int / 8192 as n`.execute(
            stack.database.db,
          )
        ).rows[0]!.n,
      );
    const folder = new DeltaFolder(stack.database.db, 1000, 2000);
    try {
      // Each scan its own combination, so its own delta.
      await storeDeltas(1500, 0);
      expect(await folder.foldNow()).toBe(1500);
      // Fewer than 2,000 folded: their dead rows still fill the table's pages.
      expect(await pages()).toBeGreaterThan(0);
      const unvacuumed = await pages();
      await storeDeltas(1500, 1500);
      // Fewer than 2,000 folded: the new deltas found no room among the dead rows.
      const grown = await pages();
      expect(grown).toBeGreaterThan(unvacuumed);
      expect(await folder.foldNow()).toBe(1500);
      expect(await deltasLeft()).toBe(0);
      // 3,000 folded: the vacuum reclaimed the pages, which the next deltas fill again instead of
      // growing the table (it keeps its pages: they would only be asked for again).
      await storeDeltas(1500, 3000);
      expect(await pages()).toBeLessThanOrEqual(grown);
    } finally {
      await folder.close();
    }
  });
});

describe("the dictionary of values the rollups code", () => {
  it("codes values past 2^31, however many distinct values outsiders send", async () => {
    const { accountId, linkId } = await newLink();
    const db = stack.database.db;
    // As if 2^31 values (referrer hosts, say) had been coded already.
    await sql`select setval(pg_get_serial_sequence('links.scan_values', 'code'), 2147483648)`.execute(db);
    await storeScans(db, scanColumnsOf([scan(linkId, "2026-11-23T05:00:00Z", { referrerHost: "past-int.example" })]));
    while ((await foldScanDeltas(db)) === undefined);
    const { rows } = await sql<{ code: number }>`
      select code from links.scan_values where dimension_value = 'rpast-int.example'`.execute(db);
    expect(rows[0]!.code).toBeGreaterThan(2 ** 31);
    const { referrers } = await analytics.getLinkAnalytics({
      accountId,
      linkId,
      fromDate: "2026-11-23",
      toDate: "2026-11-23",
    });
    expect(referrers.map((r) => [r.value, r.scans])).toEqual([["past-int.example", 1n]]);
  });

  it("refuses to report a stored value of no known dimension rather than make one up", async () => {
    const { linkId } = await newLink();
    const db = stack.database.db;
    const { rows } = await sql<{ code: number }>`
      insert into links.scan_values (dimension_value) values (${`z${linkId}`}) returning code`.execute(db);
    const counts = encodeDayCounts({ scans: 1, uniqueScans: 1, values: new Map([[Number(rows[0]!.code), 1]]) });
    await sql`insert into links.scan_link_days (link_id, day, counts)
      values (${linkId}, '2026-11-23', ${Buffer.from(counts)})`.execute(db);
    await expect(summarizeScans(db, linkId, "2026-11-23", "2026-11-23")).rejects.toThrow(/of no known dimension/);
  });
});

describe("distinct visitors over long ranges", () => {
  // Sketches from the first visitor-day on, so a small test takes the path a year of a busy code takes.
  let sketched: LinksStack;
  let sketchedAnalytics: Client<typeof AnalyticsService>;
  beforeAll(async () => {
    sketched = await startLinks({ now: () => NOW, exactVisitorDays: 0 });
    sketchedAnalytics = createClient(
      AnalyticsService,
      inProcessTransport({ modules: [sketched.module], credentials, logger, token: credentials.serviceToken }),
    );
  });
  afterAll(() => sketched?.close());

  const sketchRows = async (linkId: string) =>
    (
      await sql<{ day: string; sketch: Uint8Array }>`
        select to_char(day, 'YYYY-MM-DD') as day, sketch from links.scan_link_days
        where link_id = ${linkId} and sketch is not null order by day`.execute(sketched.database.db)
    ).rows.map(({ day, sketch }) => ({ day, visitors: decodeDaySketch(sketch).visitors }));

  it("are estimated within 5% from day sketches, kept for the days that are over; daily counts stay exact", async () => {
    const { accountId, linkId: id } = await sketched.links
      .createLink({ accountId: randomUUID(), destinationUrl: "https://example.com/" })
      .then(({ link }) => ({ accountId: link!.accountId, linkId: link!.id }));
    // 2,400 visitors over three days, each day 1,200 of them, overlapping: 21st 0-1199, 22nd 600-1799, today 1200-2399.
    const days = ["2026-11-21", "2026-11-22", "2026-11-23"];
    for (const [i, day] of days.entries()) {
      const scans = Array.from({ length: 1200 }, (_, j) =>
        scan(id, `${day}T0${j % 10}:00:00Z`, { visitorKey: `visitor-${i * 600 + j}` }),
      );
      await sketched.redirects.recordScans({ scans });
    }
    const request = { accountId, linkId: id, fromDate: "2026-11-21", toDate: "2026-11-23" };
    const first = await sketchedAnalytics.getLinkAnalytics(request);
    expect(first.daily.map((d) => Number(d.uniqueScans))).toEqual([1200, 1200, 1200]);
    expect(first.totalScans).toBe(3600n);
    expect(Math.abs(Number(first.uniqueScans) - 2400) / 2400).toBeLessThan(0.05);
    // Today is still changing: only the two days that are over keep a sketch.
    expect(await sketchRows(id)).toEqual([
      { day: "2026-11-21", visitors: 1200 },
      { day: "2026-11-22", visitors: 1200 },
    ]);
    // The same answer from the kept sketches.
    expect((await sketchedAnalytics.getLinkAnalytics(request)).uniqueScans).toBe(first.uniqueScans);

    // A scan arriving late for a day that was sketched, from a visitor new to it: the sketch is rebuilt.
    await sketched.redirects.recordScans({ scans: [scan(id, "2026-11-21T23:00:00Z", { visitorKey: "latecomer" })] });
    const late = await sketchedAnalytics.getLinkAnalytics(request);
    expect(late.daily.map((d) => Number(d.uniqueScans))).toEqual([1201, 1200, 1200]);
    expect(Math.abs(Number(late.uniqueScans) - 2401) / 2401).toBeLessThan(0.05);
    expect((await sketchRows(id))[0]).toEqual({ day: "2026-11-21", visitors: 1201 });
  });

  it("are counted exactly up to the limit of visitor-days, folded or not, and left to sketches past it", async () => {
    const { linkId } = await newLink();
    // 7 visitor-days: 4 visitors on the 20th, 3 of them again on the 21st.
    const visits = [..."abcd"].map((v) => scan(linkId, "2026-11-20T08:00:00Z", { visitorKey: v }));
    visits.push(...[..."abc"].map((v) => scan(linkId, "2026-11-21T08:00:00Z", { visitorKey: v })));
    await stack.redirects.recordScans({ scans: visits });
    const db = stack.database.db.withSchema("links");
    const count = (limit: number) => countVisitorsUpTo(db, linkId, "2026-11-20", "2026-11-21", limit);
    expect([await count(7), await count(6)]).toEqual([4, undefined]);
    await foldScanDeltas(db);
    expect([
      await count(7),
      await count(6),
      await countVisitorsUpTo(db, linkId, "2026-11-21", "2026-11-21", 3),
    ]).toEqual([4, undefined, 3]);
  });

  it("read each visitor's register and rank as the stored sketches were built", async () => {
    const { linkId } = await newLink();
    await stack.redirects.recordScans({
      scans: Array.from({ length: 500 }, (_, j) => scan(linkId, "2026-11-22T08:00:00Z", { visitorKey: `v${j}` })),
    });
    // The rank as first written in SQL: one plus the leading zeros of the hash's low 52 bits.
    const { rows: expected } = await sql<{ register: number; rank: number }>`
      select ((visitor >> 52) & 4095)::int as register,
        max(53 - length(ltrim(visitor::bit(52)::text, '0')))::int as rank
      from links.raw_scans where link = (select number from links.links where id = ${linkId}) group by 1 order by 1`.execute(
      stack.database.db,
    );
    const read = await dayRegisters(stack.database.db.withSchema("links"), linkId, ["2026-11-22"]);
    expect(read.map(({ register, rank }) => ({ register, rank })).sort((a, b) => a.register - b.register)).toEqual(
      expected,
    );
  });

  it("stay exact where the range is small, on the default stack", async () => {
    const { accountId, linkId } = await newLink();
    await stack.redirects.recordScans({
      scans: Array.from({ length: 300 }, (_, j) =>
        scan(linkId, `2026-11-2${j % 3}T08:00:00Z`, { visitorKey: `visitor-${j % 250}` }),
      ),
    });
    const summary = await analytics.getLinkAnalytics({
      accountId,
      linkId,
      fromDate: "2026-11-20",
      toDate: "2026-11-22",
    });
    expect(summary.uniqueScans).toBe(250n);
  });
});
