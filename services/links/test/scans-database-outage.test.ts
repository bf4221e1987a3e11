// Scans answered while Postgres is unreachable are stored once it is back: the recorder keeps every
// batch until a commit confirms it. Needs a real Postgres server (DATABASE_URL), whose connections the
// test cuts and refuses for a while, as a restart would; on the embedded default there is no server
// to take away, and the retry logic is covered by scan-recorder.test.ts.
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { AnalyticsService, LinkService } from "@qrplatform/api/links";
import { openDatabase, type Database } from "@qrplatform/db";
import { adminQuery, createScratchDatabase, type ScratchDatabase } from "@qrplatform/db/testing";
import { inProcessTransport } from "@qrplatform/platform";
import { scanClassifier } from "../src/scans/recording/classify.js";
import { ScanRecorder, sendVia } from "../src/scans/recording/scan-recorder.js";
import { buildLinks } from "../src/server.js";
import { credentials, logger, SHORT_BASE } from "./support/links-stack.js";
import { PAGE_TOKEN_SECRET, VISITOR_KEY_SECRET } from "@qrplatform/testing";

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
const serverUrl = process.env.DATABASE_URL;

const admin = (sql: string) => adminQuery(serverUrl!, sql);

describe.skipIf(!serverUrl)("scans while Postgres is away", () => {
  let scratch: ScratchDatabase;
  let database: Database;
  let name: string;
  beforeAll(async () => {
    scratch = (await createScratchDatabase())!;
    name = new URL(scratch.url).pathname.slice(1);
    database = await openDatabase({ databaseUrl: scratch.url, dataDir: "" });
  });
  afterAll(async () => {
    await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => {});
    await database?.close();
    await scratch?.drop();
  });

  it("stores every scan exactly once after the database comes back", async () => {
    const module = await buildLinks({
      db: database.db,
      shortLinkBaseUrl: SHORT_BASE,
      pageTokenSecret: PAGE_TOKEN_SECRET,
    });
    const transport = inProcessTransport({ modules: [module], credentials, logger, token: credentials.serviceToken });
    const accountId = randomUUID();
    const { link } = await createClient(LinkService, transport).createLink({
      accountId,
      destinationUrl: "https://example.com/",
    });
    const recorder = new ScanRecorder({
      send: sendVia(transport),
      classify: scanClassifier({ trustedProxies: [], countryOf: () => "" }),
      visitorKeySecret: VISITOR_KEY_SECRET,
      logger,
      flushIntervalMs: 20,
    });
    const target = { linkId: link!.id, accountId, location: "https://example.com/", paused: false };
    const scan = () =>
      recorder.recordRedirect(
        {
          method: "GET",
          headers: { "user-agent": IPHONE },
          socket: { remoteAddress: "203.0.113.7" },
        } as unknown as IncomingMessage,
        target,
      );

    for (let i = 0; i < 40; i++) scan();
    // Postgres goes away: every connection is cut and new ones are refused, as during a restart.
    await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
    for (let i = 0; i < 60; i++) scan();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(recorder.pending).toBeGreaterThan(0);

    await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    await recorder.close(20_000);
    expect(recorder.pending).toBe(0);
    const { totals } = await createClient(AnalyticsService, transport).getScanTotals({
      accountId,
      linkIds: [link!.id],
    });
    expect(totals[link!.id]).toBe(100n);
  }, 60_000);
});
