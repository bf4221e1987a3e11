// The exact scan limit across redirectors (ADR 0018): two links processes on one Postgres, 200 phones
// scanning one code limited to 50 at once, half through each redirector: exactly 50 reach the
// destination, the rest the fallback. Needs a Postgres server (DATABASE_URL) that both share; on the
// embedded default the platform is one process, tested in routed-redirects.test.ts.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { LinkService } from "@qrplatform/api/links";
import { createScratchDatabase, type ScratchDatabase } from "@qrplatform/db/testing";
import { remoteTransport } from "@qrplatform/platform";
import { freePort, spawnService, type ServiceProcess } from "@qrplatform/testing";
import { credentials, linksProcessEnv, SHORT_BASE, SHORT_HOST } from "./support/links-stack.js";

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";

const serverUrl = process.env.DATABASE_URL;
const dirs: string[] = [];
const running: ServiceProcess[] = [];
let scratch: ScratchDatabase;

async function startLinksProcess(): Promise<{ grpcUrl: string; redirectPort: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), "qrp-links-limit-"));
  dirs.push(dataDir);
  const [grpcPort, redirectPort] = await Promise.all([freePort(), freePort()]);
  const service = spawnService("dist/links.js", {
    ...linksProcessEnv({ grpcPort, redirectPort, dataDir, shortLinkBaseUrl: SHORT_BASE, databaseUrl: scratch.url }),
    TRUSTED_PROXIES: "loopback",
  });
  running.push(service);
  const deadline = Date.now() + 60_000;
  while (!/gRPC listening/.test(service.output()) || !/redirector listening/.test(service.output())) {
    if (service.child.exitCode !== null || Date.now() > deadline)
      throw new Error(`links did not start:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { grpcUrl: `http://127.0.0.1:${grpcPort}`, redirectPort };
}

function scan(port: number, slug: string, i: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: "127.0.0.1",
        port,
        path: `/${slug}`,
        agent: false,
        headers: { host: SHORT_HOST, "user-agent": IPHONE, "x-forwarded-for": `198.51.100.${i % 250}` },
      },
      (res) => {
        res.resume();
        resolve(`${res.statusCode} ${res.headers.location ?? ""}`.trim());
      },
    );
    req.on("error", reject);
  });
}

describe.skipIf(!serverUrl)("the scan limit with two links processes", () => {
  beforeAll(async () => {
    scratch = (await createScratchDatabase())!;
  });
  afterAll(async () => {
    for (const service of running) if (service.child.exitCode === null) service.child.kill("SIGKILL");
    await scratch?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("lets exactly 50 of 200 concurrent scans through at max_scans = 50", async () => {
    const first = await startLinksProcess();
    const second = await startLinksProcess();
    const links = createClient(
      LinkService,
      remoteTransport({ baseUrl: first.grpcUrl, token: credentials.serviceToken }),
    );
    const { link } = await links.createLink({
      accountId: randomUUID(),
      destinationUrl: "https://example.com/menu",
      routing: { maxScans: 50n, expiredUrl: "https://example.com/over" },
    });
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        scan(i % 2 === 0 ? first.redirectPort : second.redirectPort, link!.slug, i),
      ),
    );
    const counts = new Map<string, number>();
    for (const answer of answers) counts.set(answer, (counts.get(answer) ?? 0) + 1);
    expect(counts).toEqual(
      new Map([
        ["302 https://example.com/menu", 50],
        ["302 https://example.com/over", 150],
      ]),
    );
    const reachedBy = (port: number) =>
      answers.filter((answer, i) => answer.endsWith("/menu") && (i % 2 === 0 ? first : second).redirectPort === port);
    expect(reachedBy(first.redirectPort).length).toBeGreaterThan(0);
    expect(reachedBy(second.redirectPort).length).toBeGreaterThan(0);
  });
});
