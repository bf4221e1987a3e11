// deploy/local/run-services.sh, the separate-processes shape on one machine: the caller's settings
// reach the processes, PORT_OFFSET lets two stacks run side by side, and a process that exits is
// restarted while the others keep serving (the edge answers 503 only for what needs it meanwhile).
//
// It lives with the edge's tests, beside the other tests of the processes shape. It needs PostgreSQL
// (the runner does), so it belongs to CI's Postgres pass.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionTier, TenancyAdminService } from "@qrplatform/api/tenancy";
import { createScratchDatabase, type ScratchDatabase } from "@qrplatform/db/testing";
import { remoteTransport } from "@qrplatform/platform";
import { localPorts } from "@qrplatform/platform/layout";
import { REPO_ROOT, startOtlpReceiver, type OtlpReceiver } from "@qrplatform/testing";
import { call, expectError } from "./support/http.js";
import { credentials } from "./support/stack.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One running deploy/local runner and what it printed. */
interface Runner {
  readonly child: ChildProcess;
  readonly offset: number;
  readonly edgeUrl: string;
  readonly tenancyUrl: string;
  output(): string;
}

function canListen(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A PORT_OFFSET whose every port is free, below the ephemeral range, and not `avoid`'s. */
async function freeOffset(avoid?: number): Promise<number> {
  for (;;) {
    const offset = 2_000 + 100 * Math.floor(Math.random() * 200);
    if (avoid !== undefined && Math.abs(offset - avoid) < 1_500) continue;
    const { ports, redirectPort, metricsPorts } = localPorts(offset);
    const all = [...Object.values(ports), ...Object.values(metricsPorts), redirectPort];
    if ((await Promise.all(all.map(canListen))).every(Boolean)) return offset;
  }
}

function startRunner(offset: number, databaseUrl: string, dataDir: string, env: Record<string, string> = {}): Runner {
  let output = "";
  const child = spawn("bash", ["deploy/local/run-services.sh"], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      PORT_OFFSET: String(offset),
      LOG_LEVEL: "warn",
      SERVICE_TOKEN: credentials.serviceToken,
      ADMIN_TOKEN: credentials.adminToken,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const { ports } = localPorts(offset);
  return {
    child,
    offset,
    edgeUrl: `http://127.0.0.1:${ports.edge}`,
    tenancyUrl: `http://127.0.0.1:${ports.tenancy}`,
    output: () => output,
  };
}

async function waitFor(
  runner: Runner,
  what: string,
  condition: () => Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition().catch(() => false))) {
    if (runner.child.exitCode !== null)
      throw new Error(`the runner exited while waiting for ${what}:\n${runner.output()}`);
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}:\n${runner.output()}`);
    await sleep(200);
  }
}

const ready = (runner: Runner) => async () => (await fetch(`${runner.edgeUrl}/readyz`)).status === 200;

/** An account with an API key on this runner's stack. */
async function apiKey(runner: Runner, name: string): Promise<string> {
  const admin = createClient(
    TenancyAdminService,
    remoteTransport({ baseUrl: runner.tenancyUrl, token: credentials.adminToken }),
  );
  const { account } = await admin.createAccount({ name, subscriptionTier: SubscriptionTier.SCALE });
  return (await admin.createApiKey({ accountId: account!.id })).secret;
}

describe.skipIf(!process.env.DATABASE_URL)("deploy/local/run-services.sh", () => {
  let receiver: OtlpReceiver;
  let first: Runner;
  let second: Runner;
  const scratches: ScratchDatabase[] = [];
  let dataDir: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    dataDir = mkdtempSync(join(tmpdir(), "qrp-local-runner-"));
    for (let i = 0; i < 2; i++) scratches.push((await createScratchDatabase())!);
    const firstOffset = await freeOffset();
    // Documented settings on the runner's command line, which each process must see.
    first = startRunner(firstOffset, scratches[0]!.url, join(dataDir, "first"), {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
    second = startRunner(await freeOffset(firstOffset), scratches[1]!.url, join(dataDir, "second"));
    await waitFor(first, "the first stack ready", ready(first));
    await waitFor(second, "the second stack ready", ready(second));
  }, 300_000);

  afterAll(async () => {
    // SIGTERM: the runner stops each of its processes and exits once they have.
    await Promise.all(
      [first, second].map(async (runner) => {
        if (!runner || runner.child.exitCode !== null) return;
        const exited = new Promise((resolve) => runner.child.once("exit", resolve));
        runner.child.kill("SIGTERM");
        await exited;
      }),
    );
    await receiver?.close();
    await Promise.all(scratches.map((scratch) => scratch.drop()));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("passes the caller's environment to the processes: tracing reaches the edge and the services", async () => {
    const key = await apiKey(first, "Traced");
    expect((await call(`${first.edgeUrl}/api/v1`, "GET", "/account", { key })).status).toBe(200);
    const spans = await receiver.waitFor(
      (all) => ["edge", "tenancy"].every((service) => all.some((span) => span.service === service)),
      30_000,
    );
    expect(spans.some((span) => span.service === "edge")).toBe(true);
    expect(spans.some((span) => span.service === "tenancy")).toBe(true);
  });

  it("runs two stacks side by side, each on its own ports and database", async () => {
    expect(first.edgeUrl).not.toBe(second.edgeUrl);
    const firstKey = await apiKey(first, "First");
    const secondKey = await apiKey(second, "Second");
    expect((await call(`${first.edgeUrl}/api/v1`, "GET", "/account", { key: firstKey })).body.name).toBe("First");
    expect((await call(`${second.edgeUrl}/api/v1`, "GET", "/account", { key: secondKey })).body.name).toBe("Second");
    // Each edge asks its own tenancy: the other stack's key means nothing there.
    expectError(await call(`${second.edgeUrl}/api/v1`, "GET", "/account", { key: firstKey }), 401, "invalid_api_key");
  });

  it("restarts a process that exits while the others keep serving", async () => {
    const key = await apiKey(first, "Restarts");
    const api = (method: string, path: string, body?: unknown) =>
      call(`${first.edgeUrl}/api/v1`, method, path, { key, body });
    const workspace = (await api("POST", "/workspaces", { name: "Posters" })).body;
    const code = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
      name: "Poster",
      destination_url: "https://example.com/",
    });
    expect(code.status).toBe(201);
    expect((await api("GET", `/qr-codes/${code.body.id}/export?format=png&size=256`)).status).toBe(200);

    const started = /\[run-services\] rendering started \(pid (\d+)\)/g;
    const pid = Number([...first.output().matchAll(started)].at(-1)![1]);
    process.kill(pid, "SIGTERM");
    await waitFor(first, "rendering to exit", async () =>
      first.output().includes("rendering exited (status 0); restarting it in 1 s"),
    );

    // Meanwhile: 503 for what needs rendering (each size is drawn anew), 200 for the rest.
    expectError(await api("GET", `/qr-codes/${code.body.id}/export?format=png&size=300`), 503, "service_unavailable");
    expect((await api("GET", `/workspaces/${workspace.id}`)).status).toBe(200);
    expect((await api("GET", "/account")).status).toBe(200);

    // Back by itself, under a new pid, and the edge draws again.
    await waitFor(first, "rendering restarted", async () => [...first.output().matchAll(started)].length === 2);
    await waitFor(
      first,
      "exports again",
      async () => (await api("GET", `/qr-codes/${code.body.id}/export?format=png&size=320`)).status === 200,
      60_000,
    );
    // Nothing else was restarted, and the runner still runs.
    expect(first.output().match(/\[run-services\] \w+ exited/g)).toEqual(["[run-services] rendering exited"]);
    expect(first.child.exitCode).toBeNull();
  }, 180_000);

  it("does not restart a process that cannot start because its port is taken", async () => {
    const started = /\[run-services\] rendering started \(pid (\d+)\)/g;
    const pid = Number([...second.output().matchAll(started)].at(-1)![1]);
    const port = localPorts(second.offset).ports.rendering;
    process.kill(pid, "SIGKILL");
    // Take the port as soon as it is free, inside the runner's first wait of 1 s.
    const squatter = createServer();
    await new Promise<void>((resolve, reject) => {
      const attempt = () => {
        squatter.once("error", () => setTimeout(attempt, 20));
        squatter.listen(port, "127.0.0.1", () => resolve());
      };
      attempt();
      setTimeout(() => reject(new Error("the port stayed taken")), 10_000);
    });
    try {
      await waitFor(second, "rendering to give up", async () =>
        second.output().includes("rendering could not start (status 2); not restarting it"),
      );
      expect(second.output()).toContain(`(GRPC_PORT): the address is already in use`);
      // It stays down, and the rest of the stack keeps serving.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect([...second.output().matchAll(started)]).toHaveLength(2);
      const key = await apiKey(second, "Still serving");
      expect((await call(`${second.edgeUrl}/api/v1`, "GET", "/account", { key })).status).toBe(200);
      expect(second.child.exitCode).toBeNull();
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  }, 120_000);
});
