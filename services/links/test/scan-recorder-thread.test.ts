// Recording on a thread of its own: the request thread hands over a few fields of each redirect, the
// recording thread classifies them, stores them through a connection of its own, spools while they
// cannot be stored, and every scan is counted once. Both engines: a session of PGlite's thread (as
// `npm start` has it), and connections of its own to a Postgres server (DATABASE_URL).
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "node:worker_threads";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { AnalyticsService, LinkService } from "@qrplatform/api/links";
import { openDatabase, type Database } from "@qrplatform/db";
import { adminQuery, createScratchDatabase, type ScratchDatabase } from "@qrplatform/db/testing";
import { inProcessTransport, Metrics } from "@qrplatform/platform";
import { visitorKey } from "../src/scans/recording/classify.js";
import { onAnsweringThread, onRecordingThread } from "../src/scans/recording/placement.js";
import { ScanRecorderThread, type RecorderThreadStorage } from "../src/scans/recording/scan-recorder-thread.js";
import { buildLinks, recordingThreadStorage, type LinksModule, type RedirectTarget } from "../src/server.js";
import { credentials, logger, SHORT_BASE } from "./support/links-stack.js";
import { PAGE_TOKEN_SECRET, VISITOR_KEY_SECRET } from "@qrplatform/testing";

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
const PIXEL =
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36";
const serverUrl = process.env.DATABASE_URL;

/** A redirect as a load balancer on loopback passes it on: the visitor in X-Forwarded-For, its country in CF-IPCountry. */
const request = (method: string, userAgent: string, visitor: string, country = "DE") =>
  ({
    method,
    headers: {
      "user-agent": userAgent,
      "x-forwarded-for": visitor,
      "cf-ipcountry": country,
      referer: "https://news.example/story",
    },
    socket: { remoteAddress: "127.0.0.1" },
  }) as unknown as IncomingMessage;

function recorderThread(storage: RecorderThreadStorage, options: { spoolDir?: string; metrics?: Metrics } = {}) {
  return new ScanRecorderThread({
    storage,
    visitorKeySecret: VISITOR_KEY_SECRET,
    trustedProxies: ["loopback"],
    // Named as a proxy's documentation spells it; Node keys headers in lower case.
    countryHeader: "CF-IPCountry",
    spoolDir: options.spoolDir,
    logger,
    metrics: options.metrics,
    flushIntervalMs: 20,
  });
}

async function newLink(module: LinksModule): Promise<RedirectTarget & { accountId: string }> {
  const accountId = randomUUID();
  const transport = inProcessTransport({ modules: [module], credentials, logger, token: credentials.serviceToken });
  const { link } = await createClient(LinkService, transport).createLink({
    accountId,
    destinationUrl: "https://example.com/",
  });
  return { linkId: link!.id, accountId, location: "https://example.com/", paused: false };
}

/** How an engine is set up for the suite, and how storing is made to fail for a while (as during a restart). */
interface Engine {
  name: string;
  skip: boolean;
  open(): Promise<Database>;
  breakStoring(database: Database): Promise<void>;
  repairStoring(database: Database): Promise<void>;
  close(database: Database | undefined): Promise<void>;
}

let scratch: ScratchDatabase | undefined;
const scratchName = () => new URL(scratch!.url).pathname.slice(1);
const ENGINES: Engine[] = [
  {
    name: "a session of its own of PGlite's thread",
    skip: false,
    open: () => openDatabase({ dataDir: "memory://", pgliteThread: true }),
    // The table the scans go to is away: every batch fails, and nothing else is touched.
    breakStoring: async (database) =>
      void (await sql`ALTER TABLE links.raw_scans RENAME TO raw_scans_away`.execute(database.db)),
    repairStoring: async (database) =>
      void (await sql`ALTER TABLE links.raw_scans_away RENAME TO raw_scans`.execute(database.db)),
    close: async (database) => database?.close(),
  },
  {
    name: "connections of its own to a Postgres server",
    skip: !serverUrl,
    async open() {
      scratch = (await createScratchDatabase())!;
      return openDatabase({ databaseUrl: scratch.url, dataDir: "" });
    },
    // Every connection is cut and new ones are refused, as during a restart; the module's own pool too.
    async breakStoring() {
      await adminQuery(serverUrl!, `ALTER DATABASE ${scratchName()} ALLOW_CONNECTIONS false`);
      await adminQuery(
        serverUrl!,
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${scratchName()}'`,
      );
    },
    repairStoring: async () =>
      void (await adminQuery(serverUrl!, `ALTER DATABASE ${scratchName()} ALLOW_CONNECTIONS true`)),
    async close(database) {
      if (scratch)
        await adminQuery(serverUrl!, `ALTER DATABASE ${scratchName()} ALLOW_CONNECTIONS true`).catch(() => {});
      await database?.close();
      await scratch?.drop();
    },
  },
];

describe.each(ENGINES)("recording scans on a thread of its own, storing through $name", (engine) => {
  let database: Database;
  let module: LinksModule;
  const dirs: string[] = [];

  beforeAll(async () => {
    if (engine.skip) return;
    database = await engine.open();
    module = await buildLinks({ db: database.db, shortLinkBaseUrl: SHORT_BASE, pageTokenSecret: PAGE_TOKEN_SECRET });
  });
  afterAll(async () => {
    if (!engine.skip) await engine.close(database);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const transport = () =>
    inProcessTransport({ modules: [module], credentials, logger, token: credentials.serviceToken });
  const analytics = () => createClient(AnalyticsService, transport());
  const recorderFor = (options: { spoolDir?: string; metrics?: Metrics; announced?: string[][] } = {}) =>
    recorderThread(
      recordingThreadStorage(
        {
          announceStoredScans: async (linkIds) => {
            options.announced?.push([...linkIds]);
            await module.announceStoredScans(linkIds);
          },
        },
        database,
      ),
      options,
    );

  it.skipIf(engine.skip)(
    "classifies and stores each scan once, leaves HEADs and bots out, and announces the links it stored",
    async () => {
      const target = await newLink(module);
      const metrics = new Metrics();
      const announced: string[][] = [];
      const recorder = recorderFor({ metrics, announced });
      for (let i = 0; i < 1500; i++)
        recorder.recordRedirect(request("GET", i % 3 === 0 ? PIXEL : IPHONE, `203.0.113.${i % 50}`), target);
      recorder.recordRedirect(request("HEAD", IPHONE, "203.0.113.1"), target);
      recorder.recordRedirect(request("GET", "Googlebot/2.1 (+http://www.google.com/bot.html)", "203.0.113.1"), target);
      expect(recorder.pending).toBeGreaterThan(0);
      await recorder.close();

      expect(recorder.pending).toBe(0);
      expect(recorder.recorded).toBe(1500);
      expect(announced.flat()).toContain(target.linkId);
      const stored = (await metrics.registry.getSingleMetric("qrp_scans_stored_total")!.get()).values[0]?.value;
      expect(stored).toBe(1500);
      const summary = await analytics().getLinkAnalytics({
        accountId: target.accountId,
        linkId: target.linkId,
        fromDate: "",
        toDate: "",
      });
      // 50 addresses, each seen with one agent or both: the distinct address-and-agent pairs.
      const visitors = new Set(Array.from({ length: 1500 }, (_, i) => `${i % 50}/${i % 3 === 0 ? "pixel" : "iphone"}`))
        .size;
      expect(summary).toMatchObject({ totalScans: 1500n, uniqueScans: BigInt(visitors) });
      expect(summary.countries).toEqual([expect.objectContaining({ value: "DE", scans: 1500n })]);
      expect(summary.devices).toEqual([expect.objectContaining({ value: "mobile", scans: 1500n })]);
      expect(summary.referrers).toEqual([expect.objectContaining({ value: "news.example", scans: 1500n })]);
      // The visitor key is the one the request thread would have made: the forwarded address, hashed.
      const key = visitorKey(VISITOR_KEY_SECRET, target.linkId, { clientAddress: "203.0.113.1", userAgent: IPHONE });
      const found = await database.db
        .withSchema("links")
        .selectFrom("raw_scans")
        .select("key")
        .where("link", "=", sql<string>`(select number from links.links where id = ${target.linkId})`)
        .where("visitor", "=", sql<string>`hashtextextended(${key}, 0)`)
        .execute();
      expect(found).toHaveLength(
        Array.from({ length: 1500 }, (_, i) => i).filter((i) => i % 50 === 1 && i % 3 !== 0).length,
      );
    },
  );

  it.skipIf(engine.skip)(
    "replaces a thread that ended, and the new one stores what was captured meanwhile",
    async () => {
      const target = await newLink(module);
      const metrics = new Metrics();
      const recorder = recorderFor({ metrics });
      for (let i = 0; i < 100; i++) recorder.recordRedirect(request("GET", IPHONE, `192.0.2.${i}`), target);
      await until(() => recorder.pending === 0);
      // As if the thread had crashed: it ends without a word (on PGlite, its session with it).
      await (recorder as unknown as { worker: Worker }).worker.terminate();
      for (let i = 0; i < 50; i++) recorder.recordRedirect(request("GET", IPHONE, `192.0.2.${100 + i}`), target);
      await until(() => recorder.pending === 0);
      await recorder.close();

      expect(recorder.recorded).toBe(150);
      const dropped = (await metrics.registry.getSingleMetric("qrp_scans_dropped_total")!.get()).values;
      expect(dropped.filter((value) => value.value > 0)).toEqual([]);
      const { totals } = await analytics().getScanTotals({ accountId: target.accountId, linkIds: [target.linkId] });
      expect(totals[target.linkId]).toBe(150n);
    },
  );

  it.skipIf(engine.skip)(
    "spools while storing fails, and stores everything exactly once when it works again",
    async () => {
      const target = await newLink(module);
      const spoolDir = mkdtempSync(join(tmpdir(), "qrp-thread-spool-"));
      dirs.push(spoolDir);
      const recorder = recorderFor({ spoolDir });
      for (let i = 0; i < 40; i++) recorder.recordRedirect(request("GET", IPHONE, `198.51.100.${i}`), target);
      await until(() => recorder.pending === 0);

      await engine.breakStoring(database);
      for (let i = 0; i < 60; i++) recorder.recordRedirect(request("GET", IPHONE, `198.51.100.${100 + i}`), target);
      await until(() => recorder.spooledScans === 60, 15_000);
      expect(recorder.oldestUnstoredAgeMs).toBeGreaterThan(0);

      await engine.repairStoring(database);
      await until(() => recorder.spooledScans === 0 && recorder.pending === 0, 20_000);
      await recorder.close();
      expect(recorder.recorded).toBe(100);
      const { totals } = await analytics().getScanTotals({ accountId: target.accountId, linkIds: [target.linkId] });
      expect(totals[target.linkId]).toBe(100n);
    },
    60_000,
  );

  it.skipIf(engine.skip)("records on either placement what the other would, from the same settings", async () => {
    const settings = {
      visitorKeySecret: VISITOR_KEY_SECRET,
      trustedProxies: ["loopback"],
      countryHeader: "CF-IPCountry",
      flushIntervalMs: 20,
    };
    const placements = {
      answering: onAnsweringThread(module.storeCheckedScans),
      recording: onRecordingThread(recordingThreadStorage(module, database)),
    };
    for (const [name, placement] of Object.entries(placements)) {
      const target = await newLink(module);
      const recorder = await placement(settings, { logger });
      const visits = Array.from({ length: 30 }, (_, i) => ({
        agent: i % 3 === 0 ? PIXEL : IPHONE,
        visitor: `203.0.113.${i % 7}`,
        country: i % 2 ? "FR" : "DE",
      }));
      for (const { agent, visitor, country } of visits)
        recorder.recordRedirect(request("GET", agent, visitor, country), target);
      recorder.recordRedirect(request("GET", "Googlebot/2.1 (+http://www.google.com/bot.html)", "203.0.113.1"), target);
      recorder.recordRedirect(request("HEAD", IPHONE, "203.0.113.1"), target);
      await recorder.close();

      expect([name, recorder.recorded, recorder.pending]).toEqual([name, 30, 0]);
      // The stored row keeps the visitor key's hash, and its context spelled out once in scan_contexts.
      const { rows } = await sql<{
        country: string;
        device_type: string;
        os: string;
        referrer_host: string;
        visitor: string;
      }>`
        select context.country, context.device_type, context.os, context.referrer_host, scan.visitor::text as visitor
        from links.raw_scans as scan join links.scan_contexts as context on context.code = scan.context
        where scan.link = (select number from links.links where id = ${target.linkId})`.execute(database.db);
      const hashes = await Promise.all(
        visits.map(async ({ agent, visitor }) => {
          const key = visitorKey(VISITOR_KEY_SECRET, target.linkId, { clientAddress: visitor, userAgent: agent });
          const { rows: hashed } = await sql<{
            visitor: string;
          }>`select hashtextextended(${key}, 0)::text as visitor`.execute(database.db);
          return hashed[0]!.visitor;
        }),
      );
      const expected = visits.map(({ agent, country }, i) => ({
        country,
        device_type: "mobile",
        os: agent === PIXEL ? "Android" : "iOS",
        referrer_host: "news.example",
        visitor: hashes[i]!,
      }));
      const order = (list: typeof expected) => list.map((row) => JSON.stringify(row)).sort();
      expect(order(rows)).toEqual(order(expected));
    }
  });
});

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
