// A service compiled as the process a container runs (dist/tenancy.js): configuration from the environment, the port it
// reports, health, calls from a stock client, and SIGTERM draining then exiting 0.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createScratchDatabase, type ScratchDatabase } from "@qrplatform/db/testing";
import { bearer, callOk, callUnary, grpc, loadServiceClients } from "./support/grpc-js.js";
import { CREDENTIALS, PAGE_TOKEN_SECRET } from "./support/platform.js";
import { connectionRefused, exitWithin, spawnService, waitForLog, type ServiceProcess } from "@qrplatform/testing";

const TENANCY_MAIN = "dist/tenancy.js";

let constructors: Map<string, grpc.ServiceClientConstructor>;
let scratch: ScratchDatabase | undefined;
let dataDir: string;
const running: ServiceProcess[] = [];
const clients: grpc.Client[] = [];

/** The environment of a correctly configured tenancy process: Postgres when the suite has one, else PGlite on disk. */
function tenancyEnv(): Record<string, string> {
  return {
    GRPC_HOST: "127.0.0.1",
    GRPC_PORT: "0",
    SERVICE_TOKEN: CREDENTIALS.serviceToken,
    ADMIN_TOKEN: CREDENTIALS.adminToken,
    PAGE_TOKEN_SECRET,
    LOG_LEVEL: "info",
    ...(scratch ? { DATABASE_URL: scratch.url } : { DATA_DIR: dataDir }),
  };
}

function client(service: string, port: number): grpc.Client {
  const Client = constructors.get(service)!;
  const made = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  clients.push(made);
  return made;
}

/** Starts tenancy and waits for the line that reports its port. */
async function startTenancy(): Promise<{ process: ServiceProcess; port: number; listening: Record<string, unknown> }> {
  const process = spawnService(TENANCY_MAIN, tenancyEnv());
  running.push(process);
  const listening = await waitForLog(process, (line) => line.msg === "gRPC listening", 45_000);
  return { process, port: listening.port as number, listening };
}

beforeAll(async () => {
  constructors = loadServiceClients();
  scratch = await createScratchDatabase();
  dataDir = mkdtempSync(join(tmpdir(), "qrp-tenancy-"));
});

afterEach(() => {
  for (const made of clients.splice(0)) made.close();
});

afterAll(async () => {
  // Anything a failed test left running is killed by its pid, then the data is removed.
  for (const process of running)
    if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill("SIGKILL");
  await Promise.all(running.map((process) => process.exited));
  await scratch?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("tenancy as a standalone process", () => {
  it("serves health and calls, drains and exits 0 on SIGTERM, refuses connections after, and keeps its data for the next start", async () => {
    const first = await startTenancy();
    expect(first.listening).toMatchObject({
      service: "tenancy",
      services: [
        "qrplatform.tenancy.v1.TenancyService",
        "qrplatform.tenancy.v1.IdempotencyKeyService",
        "qrplatform.tenancy.v1.TenancyAdminService",
      ],
    });
    expect(first.port).toBeGreaterThan(0);

    const health = client("grpc.health.v1.Health", first.port);
    expect(await callOk(health, "Check", { service: "" })).toEqual({ status: "SERVING" });
    expect(await callOk(health, "Check", { service: "qrplatform.tenancy.v1.TenancyAdminService" })).toEqual({
      status: "SERVING",
    });

    const admin = client("qrplatform.tenancy.v1.TenancyAdminService", first.port);
    const tenancy = client("qrplatform.tenancy.v1.TenancyService", first.port);
    const { account } = (await callOk(
      admin,
      "CreateAccount",
      { name: "Process Co", subscriptionTier: "SUBSCRIPTION_TIER_SCALE" },
      bearer(CREDENTIALS.adminToken),
    )) as { account: { id: string; slug: string } };
    expect(account.slug).toBe("process-co");
    expect(
      (
        (await callOk(tenancy, "GetAccount", { accountId: account.id }, bearer(CREDENTIALS.serviceToken))).account as {
          id: string;
        }
      ).id,
    ).toBe(account.id);

    // In flight when the signal arrives: a long-lived health Watch stream. Draining must not wait for it forever.
    const watch = (health as unknown as { Watch(req: object): grpc.ClientReadableStream<{ status: string }> }).Watch({
      service: "",
    });
    const watched: string[] = [];
    watch.on("data", (update: { status: string }) => watched.push(update.status));
    watch.on("error", () => {});
    const watchEnded = new Promise<grpc.StatusObject>((resolve) => watch.on("status", resolve));
    await expect.poll(() => watched, { timeout: 5_000 }).toEqual(["SERVING"]);

    first.process.child.kill("SIGTERM");
    expect(await exitWithin(first.process, 10_000)).toBe(0);
    // The stream ended with the process instead of hanging (it ends OK today; see the NOT_SERVING bug in the report).
    expect([grpc.status.OK, grpc.status.UNAVAILABLE, grpc.status.CANCELLED]).toContain((await watchEnded).code);

    const logs = first.process.logLines();
    expect(logs.find((line) => line.msg === "shutting down")).toMatchObject({ signal: "SIGTERM", service: "tenancy" });
    expect(
      logs.filter((line) => (line.level as number) >= 50),
      first.process.output(),
    ).toEqual([]);
    expect(await connectionRefused(first.port)).toBe(true);

    // The same configuration starts again and finds the account: shutdown closed the database cleanly.
    const second = await startTenancy();
    const again = client("qrplatform.tenancy.v1.TenancyService", second.port);
    const read = await callOk(again, "GetAccount", { accountId: account.id }, bearer(CREDENTIALS.serviceToken));
    expect(read.account).toMatchObject({
      id: account.id,
      slug: "process-co",
      subscriptionTier: "SUBSCRIPTION_TIER_SCALE",
    });
    second.process.child.kill("SIGTERM");
    expect(await exitWithin(second.process, 10_000)).toBe(0);
    expect(await connectionRefused(second.port)).toBe(true);
  });

  // Only Postgres lets the test hold a call inside the server deterministically: a lock taken from
  // outside the process makes GetAccount wait in the database. PGlite lives inside the process.
  it.runIf(process.env.DATABASE_URL)(
    "finishes a call in flight on SIGTERM before exiting 0, refusing new connections meanwhile (Postgres)",
    async () => {
      const started = await startTenancy();
      const admin = client("qrplatform.tenancy.v1.TenancyAdminService", started.port);
      const tenancy = client("qrplatform.tenancy.v1.TenancyService", started.port);
      const { account } = (await callOk(
        admin,
        "CreateAccount",
        { name: "Held Call", subscriptionTier: "SUBSCRIPTION_TIER_FREE" },
        bearer(CREDENTIALS.adminToken),
      )) as { account: { id: string } };

      const locker = new pg.Client({ connectionString: scratch!.url });
      await locker.connect();
      try {
        await locker.query("BEGIN");
        await locker.query("LOCK TABLE tenancy.accounts IN ACCESS EXCLUSIVE MODE");
        const held = callUnary(
          tenancy,
          "GetAccount",
          { accountId: account.id },
          bearer(CREDENTIALS.serviceToken),
          30_000,
        );
        const waitingOnLock = async () =>
          (
            await locker.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
          ).rows[0]!.n;
        await expect.poll(waitingOnLock, { timeout: 10_000 }).toBe(1);

        started.process.child.kill("SIGTERM");
        await waitForLog(started.process, (line) => line.msg === "shutting down", 5_000);
        // Draining: no longer accepting connections, but not gone while the call is unanswered.
        await expect.poll(() => connectionRefused(started.port), { timeout: 5_000 }).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(started.process.child.exitCode).toBeNull();

        await locker.query("COMMIT");
        const outcome = await held;
        expect(outcome.error?.code, outcome.error?.details).toBeUndefined();
        expect((outcome.response!.account as { id: string }).id).toBe(account.id);
        expect(await exitWithin(started.process, 10_000)).toBe(0);
      } finally {
        await locker.query("ROLLBACK").catch(() => {});
        await locker.end();
      }
    },
  );

  it("refuses to start on bad configuration, naming every bad variable and printing no secret", async () => {
    const shortToken = "tooShort-x9Q";
    const env = { ...tenancyEnv(), SERVICE_TOKEN: shortToken } as Record<string, string>;
    delete env.PAGE_TOKEN_SECRET;
    const process = spawnService(TENANCY_MAIN, env);
    running.push(process);

    const code = await exitWithin(process, 20_000);
    expect(code).not.toBe(0);
    const output = process.output();
    expect(output).toMatch(/SERVICE_TOKEN: must be at least 32 characters/);
    expect(output).toMatch(/PAGE_TOKEN_SECRET/);
    expect(output).not.toContain(shortToken);
    expect(output).not.toContain(CREDENTIALS.adminToken);
    expect(process.logLines().some((line) => line.msg === "gRPC listening")).toBe(false);
  });
});
