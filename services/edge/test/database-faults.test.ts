// Postgres restarted and crashed under load, with every service (and the edge) as its own process:
// nothing exits, calls fail fast as UNAVAILABLE (503 at the edges) while the database is away, readiness
// follows it, everything answers again once it is back, and every redirect is counted exactly once.
//
// It lives with the edge's tests because the processes shape of the platform is started here (see
// support/stack.ts), on a Postgres server of the test's own (startPrivatePostgres), since the shared
// one must never be stopped. It belongs to CI's Postgres pass:
// skipped without DATABASE_URL (the embedded default has no server to take away) and where the
// PostgreSQL server binaries are not installed.
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "@qrplatform/api/grpc-health";
import { AnalyticsService } from "@qrplatform/api/links";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { hasPostgresServer, startPrivatePostgres, type PrivatePostgres } from "@qrplatform/db/testing";
import { errorInfoOf, HEALTH_LIVENESS, remoteTransport } from "@qrplatform/platform";
import { settledCount } from "@qrplatform/testing";
import { credentials, startStack, type Stack } from "./support/stack.js";

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
const DATABASE_SERVICES = ["tenancy", "catalog", "links"] as const;

/** Which part of the run a request started in. */
type Phase = "before" | "restart" | "down" | "recovering" | "after";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!process.env.DATABASE_URL || !hasPostgresServer())(
  "Postgres restarted and stopped under load, separate processes",
  () => {
    let postgres: PrivatePostgres;
    let stack: Stack;

    /** Waits for a condition, failing at once with its output when one of the processes has exited. */
    async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      const processes = Object.entries(stack.processes!);
      while (!(await condition().catch(() => false))) {
        const [exited, service] =
          processes.find(([, p]) => p.child.exitCode !== null || p.child.signalCode !== null) ?? [];
        if (exited) throw new Error(`${exited} exited while waiting for ${what}:\n${service!.output()}`);
        if (Date.now() > deadline)
          throw new Error(
            `Timed out waiting for ${what}:\n${processes.map(([name, p]) => `--- ${name}\n${p.output()}`).join("\n")}`,
          );
        await sleep(100);
      }
    }

    const health = (service: (typeof DATABASE_SERVICES)[number]) =>
      createClient(Health, remoteTransport({ baseUrl: stack.grpcUrls![service], token: "", timeoutMs: 2_000 }));
    const statusOf = async (service: (typeof DATABASE_SERVICES)[number]) =>
      (await health(service).check({ service: "" })).status;
    const readyz = async () => (await fetch(new URL("/readyz", stack.baseUrl))).status;

    beforeAll(async () => {
      postgres = await startPrivatePostgres();
      stack = await startStack("processes", { databaseUrl: postgres.url });
    }, 90_000);

    afterAll(async () => {
      await stack?.close();
      await postgres?.close();
    });

    it("keeps every process up, fails fast while Postgres is away, recovers, and counts each redirect once", async () => {
      const { admin, catalog } = stack;
      const analytics = createClient(
        AnalyticsService,
        remoteTransport({ baseUrl: stack.grpcUrls!.links, token: credentials.serviceToken }),
      );
      const { account } = await admin.createAccount({ name: "Faults", subscriptionTier: SubscriptionTier.ENTERPRISE });
      const accountId = account!.id;
      const links: { id: string; url: string }[] = [];
      for (let i = 0; i < 4; i++) {
        const { qrCode } = await catalog.createQrCode({
          accountId,
          name: `Poster ${i}`,
          destinationUrl: `https://example.com/${i}`,
        });
        links.push({ id: qrCode!.linkId, url: qrCode!.vanityUrl });
      }

      let phase: Phase = "before";
      let running = true;
      const scans: { link: string; status: number; phase: Phase }[] = [];
      const creates: { code: Code | "ok"; reason?: string; phase: Phase }[] = [];

      const scanLoop = async (worker: number) => {
        for (let i = worker; running; i++) {
          const link = links[i % links.length]!;
          const started = phase;
          const status = await fetch(link.url, { redirect: "manual", headers: { "user-agent": IPHONE } }).then(
            async (res) => {
              await res.arrayBuffer();
              return res.status;
            },
            () => 0,
          );
          scans.push({ link: link.id, status, phase: started });
        }
      };
      const createLoop = async (worker: number) => {
        for (let i = 0; running; i++) {
          const started = phase;
          try {
            await catalog.createQrCode({
              accountId,
              name: `Load ${worker}-${i}`,
              destinationUrl: "https://example.com/load",
            });
            creates.push({ code: "ok", phase: started });
          } catch (error) {
            const connectError = ConnectError.from(error);
            creates.push({ code: connectError.code, reason: errorInfoOf(connectError)?.reason, phase: started });
            await sleep(50);
          }
        }
      };
      const load = Promise.all([...[0, 1, 2].map(scanLoop), ...[0, 1].map(createLoop)]);

      // Warm: every link answered (and so cached by the redirector) before the database goes.
      await waitFor("every link redirected once", async () =>
        links.every((link) => scans.some((scan) => scan.link === link.id && scan.status === 302)),
      );

      // A fast restart: every backend is terminated (57P01), the server is away for a moment.
      phase = "restart";
      await postgres.restart({ mode: "fast" });
      await sleep(1_500);

      // A crash: connections drop without a word, new ones are refused until it starts again.
      phase = "down";
      await postgres.stop("immediate");
      for (const service of DATABASE_SERVICES) {
        await waitFor(
          `${service} to report NOT_SERVING`,
          async () => (await statusOf(service)) === ServingStatus.NOT_SERVING,
        );
      }
      await waitFor("the edge's /readyz to turn 503", async () => (await readyz()) === 503);
      // A link the redirector has not cached cannot be resolved: a 503 page, not a crash.
      const miss = await fetch(`${stack.redirectorUrl}/notcached1`, {
        redirect: "manual",
        headers: { "user-agent": IPHONE },
      });
      expect(miss.status).toBe(503);
      expect(miss.headers.get("retry-after")).toBe("5");
      // Liveness is the process itself, whatever the database.
      expect((await health("links").check({ service: HEALTH_LIVENESS })).status).toBe(ServingStatus.SERVING);
      await waitFor("scans while the database is down", async () => scans.some((scan) => scan.phase === "down"));

      phase = "recovering";
      await postgres.start();
      for (const service of DATABASE_SERVICES) {
        await waitFor(`${service} to report SERVING`, async () => (await statusOf(service)) === ServingStatus.SERVING);
      }
      await waitFor("the edge's /readyz to turn 200", async () => (await readyz()) === 200);

      phase = "after";
      await waitFor(
        "creates and scans after recovery",
        async () =>
          creates.some((create) => create.phase === "after" && create.code === "ok") &&
          scans.some((scan) => scan.phase === "after"),
      );
      running = false;
      await load;

      for (const [name, service] of Object.entries(stack.processes!)) {
        expect({ name, exitCode: service.child.exitCode, signal: service.child.signalCode }).toEqual({
          name,
          exitCode: null,
          signal: null,
        });
      }

      // While Postgres was away creates failed as UNAVAILABLE (never INTERNAL); once it was back, none failed.
      const failed = creates.filter((create) => create.code !== "ok");
      expect(failed.length).toBeGreaterThan(0);
      expect(new Set(failed.map((create) => `${Code[create.code as Code]} ${create.reason}`))).toEqual(
        new Set(["Unavailable database_unavailable"]),
      );
      expect(creates.filter((create) => create.phase === "after" && create.code !== "ok")).toEqual([]);
      expect(creates.filter((create) => create.phase === "after").length).toBeGreaterThan(0);

      // Cached links kept redirecting throughout; nothing was refused or answered with a server error.
      expect(new Set(scans.map((scan) => scan.status))).toEqual(new Set([302]));
      expect(scans.filter((scan) => scan.phase === "down").length).toBeGreaterThan(0);

      // Every 302 is a scan, counted exactly once once the spool has been replayed.
      const redirected = new Map(links.map((link) => [link.id, scans.filter((scan) => scan.link === link.id).length]));
      const totals = async () =>
        (await analytics.getScanTotals({ accountId, linkIds: links.map((link) => link.id) })).totals;
      const expected = [...redirected.values()].reduce((a, b) => a + b, 0);
      const counted = await settledCount(
        async () => Object.values(await totals()).reduce((a, b) => a + Number(b), 0),
        expected,
        30_000,
      );
      expect(counted).toBe(expected);
      expect(new Map(Object.entries(await totals()).map(([id, total]) => [id, Number(total)]))).toEqual(redirected);
    }, 120_000);
  },
);
