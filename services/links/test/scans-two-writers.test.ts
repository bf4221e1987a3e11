// Two links processes recording scans into one Postgres at once, then one stopped with SIGTERM and the
// other killed with SIGKILL in the middle of their load: what the first answered is counted exactly,
// what the second answered is never counted twice and loses at most its last flush interval (ADR
// 0009). Needs a Postgres server (DATABASE_URL) that two processes share; on the embedded default
// the platform is one process, and its restart and kill are tested in services/embedded.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { AnalyticsService, LinkService } from "@qrplatform/api/links";
import { createScratchDatabase, type ScratchDatabase } from "@qrplatform/db/testing";
import { remoteTransport } from "@qrplatform/platform";
import { exitWithin, freePort, spawnService, type ServiceProcess } from "@qrplatform/testing";
import { credentials, linksProcessEnv, SHORT_BASE, SHORT_HOST } from "./support/links-stack.js";

const PHONES = [
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36",
];
/** How often a recorder sends its buffer (scan-recorder.ts): what a hard kill may lose. */
const FLUSH_INTERVAL_MS = 250;

interface LinksProcess {
  service: ServiceProcess;
  grpcUrl: string;
  redirectPort: number;
}

const serverUrl = process.env.DATABASE_URL;
const dirs: string[] = [];
let scratch: ScratchDatabase;
const running: LinksProcess[] = [];

/** A links process on the scratch database, with a spool of its own. */
async function startLinksProcess(): Promise<LinksProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), "qrp-links-writers-"));
  dirs.push(dataDir);
  const [grpcPort, redirectPort] = await Promise.all([freePort(), freePort()]);
  const service = spawnService("dist/links.js", {
    ...linksProcessEnv({ grpcPort, redirectPort, dataDir, shortLinkBaseUrl: SHORT_BASE, databaseUrl: scratch.url }),
    // The test's requests arrive from loopback, naming their visitor in X-Forwarded-For.
    TRUSTED_PROXIES: "loopback",
  });
  const deadline = Date.now() + 60_000;
  while (!/gRPC listening/.test(service.output()) || !/redirector listening/.test(service.output())) {
    if (service.child.exitCode !== null || Date.now() > deadline)
      throw new Error(`links did not start:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const started = { service, grpcUrl: `http://127.0.0.1:${grpcPort}`, redirectPort };
  running.push(started);
  return started;
}

/** A phone following the short link: the time its 302 arrived, or undefined when the process was gone. */
function follow(port: number, slug: string, i: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = http.get(
      {
        host: "127.0.0.1",
        port,
        path: `/${slug}`,
        agent: false,
        headers: { host: SHORT_HOST, "user-agent": PHONES[i % 2], "x-forwarded-for": `198.51.100.${i % 200}` },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 302 ? performance.now() : undefined);
      },
    );
    req.on("error", () => resolve(undefined));
  });
}

/** Follows `count` times, `concurrency` at a time; answers when each 302 arrived. */
async function load(
  port: number,
  slug: string,
  count: number,
  concurrency = 8,
  onAnswer?: (answered: number) => void,
): Promise<number[]> {
  const answeredAt: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const at = await follow(port, slug, next++);
        if (at === undefined) continue;
        answeredAt.push(at);
        onAnswer?.(answeredAt.length);
      }
    }),
  );
  return answeredAt;
}

describe.skipIf(!serverUrl)("two links processes recording at once", () => {
  beforeAll(async () => {
    scratch = (await createScratchDatabase())!;
  });
  afterAll(async () => {
    for (const { service } of running)
      if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill("SIGKILL");
    await scratch?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("count every scan once while both write, all of a SIGTERMed one's, and a SIGKILLed one's but its last flush", async () => {
    const [first, second] = await Promise.all([startLinksProcess(), startLinksProcess()]);
    const links = createClient(
      LinkService,
      remoteTransport({ baseUrl: first.grpcUrl, token: credentials.serviceToken }),
    );
    const accountId = randomUUID();
    const make = async () => (await links.createLink({ accountId, destinationUrl: "https://example.com/menu" })).link!;
    const [shared, stopped, killed] = [await make(), await make(), await make()];

    // Both write the same link's rows at once.
    const [viaFirst, viaSecond] = await Promise.all([
      load(first.redirectPort, shared.slug, 150),
      load(second.redirectPort, shared.slug, 150),
    ]);
    expect(viaFirst.length + viaSecond.length).toBe(300);
    // Both flush before the kill below, which may lose only what the killed one took after this point.
    const sharedTotals = createClient(
      AnalyticsService,
      remoteTransport({ baseUrl: first.grpcUrl, token: credentials.serviceToken }),
    );
    const deadline = Date.now() + 10_000;
    while (
      (await sharedTotals.getScanTotals({ accountId, linkIds: [shared.id] })).totals[shared.id] !== 300n &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    // Mid-load, one is stopped and the other killed; requests after that find no one.
    let killedAt = 0;
    const [answeredByStopped, answeredByKilled] = await Promise.all([
      load(first.redirectPort, stopped.slug, 400, 8, (answered) => {
        if (answered === 120) first.service.child.kill("SIGTERM");
      }),
      load(second.redirectPort, killed.slug, 400, 8, (answered) => {
        if (answered !== 120) return;
        second.service.child.kill("SIGKILL");
        killedAt = performance.now();
      }),
    ]);
    expect(await exitWithin(first.service, 30_000)).toBe(0);
    expect(await exitWithin(second.service, 30_000)).toBe("SIGKILL");
    expect(answeredByStopped.length).toBeGreaterThanOrEqual(120);
    expect(answeredByKilled.length).toBeGreaterThanOrEqual(120);

    // A process started afterwards reads what reached the database.
    const reader = await startLinksProcess();
    const analytics = createClient(
      AnalyticsService,
      remoteTransport({ baseUrl: reader.grpcUrl, token: credentials.serviceToken }),
    );
    const { totals } = await analytics.getScanTotals({ accountId, linkIds: [shared.id, stopped.id, killed.id] });
    expect(totals[shared.id]).toBe(300n);
    expect(totals[stopped.id]).toBe(BigInt(answeredByStopped.length));
    const storedOfKilled = Number(totals[killed.id] ?? 0n);
    expect(storedOfKilled).toBeLessThanOrEqual(answeredByKilled.length);
    // What was answered more than a flush interval (and a timer's slack on a busy machine) before the kill was stored.
    const answeredLongBefore = answeredByKilled.filter((at) => at < killedAt - FLUSH_INTERVAL_MS - 750).length;
    expect(storedOfKilled).toBeGreaterThanOrEqual(answeredLongBefore);
    const summary = await analytics.getLinkAnalytics({ accountId, linkId: shared.id, fromDate: "", toDate: "" });
    expect(summary).toMatchObject({ totalScans: 300n, uniqueScans: 150n });
    // The rollups (folded or not, whichever process folded them) hold exactly the stored scans, in every breakdown.
    const database = new pg.Client({ connectionString: scratch.url });
    await database.connect();
    const { rows: raw } = await database.query<{ link_id: string; scans: number }>(
      `select link.id as link_id, count(*)::int as scans from links.raw_scans join links.links as link on link.number = raw_scans.link
        where link.id = any($1::uuid[]) group by 1`,
      [[shared.id, stopped.id, killed.id]],
    );
    await database.end();
    expect(Object.fromEntries(raw.map((row) => [row.link_id, BigInt(row.scans)]))).toEqual(totals);
    const killedSummary = await analytics.getLinkAnalytics({ accountId, linkId: killed.id, fromDate: "", toDate: "" });
    const sum = (entries: { scans: bigint }[]) => entries.reduce((total, entry) => total + entry.scans, 0n);
    expect([
      killedSummary.totalScans,
      sum(killedSummary.daily),
      sum(killedSummary.devices),
      sum(killedSummary.countries),
    ]).toEqual(Array(4).fill(BigInt(storedOfKilled)));
    reader.service.child.kill("SIGTERM");
    expect(await exitWithin(reader.service, 30_000)).toBe(0);
  }, 180_000);
});
