// Every process that keeps data, started while its Postgres is down: none exits (a pod rescheduled
// during an outage must not crash-loop). Each is alive but not ready, retries its migrations with
// backoff, logs the wait once, and migrates and serves once the database is back. The links process's
// redirector answers a clear 503 meanwhile (a fresh process has nothing cached), then redirects.
// The embedded platform (`npm start` with DATABASE_URL) does the same.
//
// On a Postgres server of the test's own (startPrivatePostgres), stopped before the processes start,
// so its port has nothing listening. Like database-faults.test.ts, it belongs to CI's Postgres pass.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "@qrplatform/api/grpc-health";
import { LinkService } from "@qrplatform/api/links";
import { SubscriptionTier, TenancyAdminService } from "@qrplatform/api/tenancy";
import { hasPostgresServer, startPrivatePostgres, type PrivatePostgres } from "@qrplatform/db/testing";
import { HEALTH_ACCEPTING, HEALTH_LIVENESS, remoteTransport } from "@qrplatform/platform";
import {
  freePort,
  PAGE_TOKEN_SECRET,
  type ServiceProcess,
  spawnService,
  VISITOR_KEY_SECRET,
  waitForLog,
} from "@qrplatform/testing";
import { credentials } from "./support/stack.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const WAITING = "database unreachable: migrating waits for it, retrying with backoff";

describe.skipIf(!process.env.DATABASE_URL || !hasPostgresServer())("processes started while Postgres is down", () => {
  let postgres: PrivatePostgres;
  let dataDir: string;
  const ports: Record<string, number> = {};
  const processes: Record<string, ServiceProcess> = {};

  const grpcUrl = (name: string) => `http://127.0.0.1:${ports[name]}`;
  const health = (name: string) =>
    createClient(Health, remoteTransport({ baseUrl: grpcUrl(name), token: "", timeoutMs: 2_000 }));
  const statusOf = async (name: string, service = "") => (await health(name).check({ service })).status;

  async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs = 45_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition().catch(() => false))) {
      const exited = Object.entries(processes).find(
        ([, p]) => p.child.exitCode !== null || p.child.signalCode !== null,
      );
      if (exited) throw new Error(`${exited[0]} exited while waiting for ${what}:\n${exited[1].output()}`);
      if (Date.now() > deadline)
        throw new Error(
          `Timed out waiting for ${what}:\n${Object.entries(processes)
            .map(([n, p]) => `--- ${n}\n${p.output()}`)
            .join("\n")}`,
        );
      await sleep(100);
    }
  }

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    await postgres.stop("fast");
    dataDir = mkdtempSync(join(tmpdir(), "qrp-start-outage-"));
    for (const name of ["tenancy", "links", "catalog", "redirector", "embedded", "embeddedGrpc"])
      ports[name] = await freePort();
    const common = {
      LOG_LEVEL: "info",
      SERVICE_TOKEN: credentials.serviceToken,
      ADMIN_TOKEN: credentials.adminToken,
      PAGE_TOKEN_SECRET,
      GRPC_HOST: "127.0.0.1",
      DATABASE_URL: postgres.url,
    };
    processes.tenancy = spawnService("dist/tenancy.js", {
      ...common,
      GRPC_PORT: String(ports.tenancy),
      DATA_DIR: join(dataDir, "tenancy"),
    });
    processes.links = spawnService("dist/links.js", {
      ...common,
      GRPC_PORT: String(ports.links),
      DATA_DIR: join(dataDir, "links"),
      VISITOR_KEY_SECRET,
      REDIRECT_HOST: "127.0.0.1",
      REDIRECT_PORT: String(ports.redirector),
      SHORT_LINK_BASE_URL: `http://127.0.0.1:${ports.redirector}`,
    });
    processes.catalog = spawnService("dist/catalog.js", {
      ...common,
      GRPC_PORT: String(ports.catalog),
      DATA_DIR: join(dataDir, "catalog"),
      TENANCY_URL: grpcUrl("tenancy"),
      LINKS_URL: grpcUrl("links"),
      RENDERING_URL: "http://127.0.0.1:1",
    });
    processes.embedded = spawnService("dist/embedded.js", {
      LOG_LEVEL: "info",
      DATABASE_URL: postgres.url,
      DATA_DIR: join(dataDir, "embedded"),
      PORT: String(ports.embedded),
      GRPC_PORT: String(ports.embeddedGrpc),
      METRICS_PORT: "off",
    });
  }, 90_000);

  afterAll(async () => {
    for (const service of Object.values(processes))
      if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill("SIGKILL");
    await Promise.all(Object.values(processes).map((service) => service.exited));
    await postgres?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("stay alive and not ready, then migrate and serve once the database is back", async () => {
    for (const name of ["tenancy", "links", "catalog", "embedded"])
      await waitForLog(processes[name]!, (line) => line.msg === WAITING, 45_000);

    // Alive, not ready, for the probes of each shape.
    for (const name of ["tenancy", "links", "catalog", "embeddedGrpc"]) {
      expect(await statusOf(name, HEALTH_LIVENESS)).toBe(ServingStatus.SERVING);
      expect(await statusOf(name)).toBe(ServingStatus.NOT_SERVING);
    }
    expect(await statusOf("links", HEALTH_ACCEPTING)).toBe(ServingStatus.NOT_SERVING);
    expect((await fetch(`http://127.0.0.1:${ports.embedded}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${ports.embedded}/readyz`)).status).toBe(503);
    // Calls are refused as "try again later", not as a fault.
    const admin = createClient(
      TenancyAdminService,
      remoteTransport({ baseUrl: grpcUrl("tenancy"), token: credentials.adminToken }),
    );
    await expect(
      admin.createAccount({ name: "Too early", subscriptionTier: SubscriptionTier.FREE }),
    ).rejects.toMatchObject({ code: 14 });
    // A fresh links process knows no destination yet: a clear 503 page, not a refused connection.
    const early = await fetch(`http://127.0.0.1:${ports.redirector}/abc123`, { redirect: "manual" });
    expect(early.status).toBe(503);
    expect(early.headers.get("retry-after")).toBe("5");
    expect(await early.text()).toContain("Temporarily unavailable");

    await postgres.start();
    for (const name of ["tenancy", "links", "catalog", "embeddedGrpc"]) {
      await waitFor(`${name} ready`, async () => (await statusOf(name)) === ServingStatus.SERVING);
    }
    await waitFor(
      "the embedded platform ready",
      async () => (await fetch(`http://127.0.0.1:${ports.embedded}/readyz`)).status === 200,
    );

    const { account } = await admin.createAccount({
      name: "After the outage",
      subscriptionTier: SubscriptionTier.FREE,
    });
    expect(account?.name).toBe("After the outage");
    const links = createClient(
      LinkService,
      remoteTransport({ baseUrl: grpcUrl("links"), token: credentials.serviceToken }),
    );
    const { link } = await links.createLink({ accountId: randomUUID(), destinationUrl: "https://example.com/after" });
    const redirect = await fetch(`http://127.0.0.1:${ports.redirector}/${link!.slug}`, { redirect: "manual" });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toBe("https://example.com/after");

    // One line when the wait began and one when it ended, however many tries came between.
    for (const name of ["tenancy", "links", "catalog", "embedded"]) {
      const lines = processes[name]!.logLines().map((line) => line.msg);
      expect(lines.filter((msg) => msg === WAITING)).toHaveLength(1);
      expect(lines.filter((msg) => msg === "database reachable: migrating done").length).toBeGreaterThanOrEqual(1);
    }
  }, 120_000);
});
