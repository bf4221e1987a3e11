// deploy/local/run-services.sh, the separate-processes shape on one machine: the caller's settings
// reach the processes, PORT_OFFSET lets two stacks run side by side, and a process that exits is
// restarted while the others keep serving (the edge answers 503 only for what needs it meanwhile).
//
// It lives with the edge's tests, beside the other tests of the processes shape. It needs PostgreSQL
// (the runner does), so it belongs to CI's Postgres pass.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScratchDatabase, type ScratchDatabase } from "@qrplatform/db/testing";
import { localPorts } from "@qrplatform/platform/layout";
import { startOtlpReceiver, type OtlpReceiver } from "@qrplatform/testing";
import { freePortOffset, type LocalServices, startLocalServices } from "@qrplatform/testing/local-services";
import { call, expectError } from "./support/http.js";

/** How long a stack may take to answer ready: each of its five processes compiles its sources as it starts. */
const STACK_READY_MS = 240_000;

describe.skipIf(!process.env.DATABASE_URL)("deploy/local/run-services.sh", () => {
  let receiver: OtlpReceiver;
  let first: LocalServices;
  let second: LocalServices;
  const scratches: ScratchDatabase[] = [];
  let dataDir: string;

  beforeAll(
    async () => {
      receiver = await startOtlpReceiver();
      dataDir = mkdtempSync(join(tmpdir(), "qrp-local-runner-"));
      for (let i = 0; i < 2; i++) scratches.push((await createScratchDatabase())!);
      const firstOffset = await freePortOffset();
      // Documented settings on the runner's command line, which each process must see.
      first = startLocalServices({
        offset: firstOffset,
        databaseUrl: scratches[0]!.url,
        dataDir: join(dataDir, "first"),
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: "100" },
      });
      // One stack at a time: ten processes compiling their sources at once, beside the other test files
      // on CI's two cores, took longer than any fair wait; the second starts on tsx's warm cache.
      await first.ready(STACK_READY_MS);
      second = startLocalServices({
        offset: await freePortOffset(firstOffset),
        databaseUrl: scratches[1]!.url,
        dataDir: join(dataDir, "second"),
      });
      await second.ready(STACK_READY_MS);
    },
    2 * STACK_READY_MS + 60_000,
  );

  afterAll(async () => {
    // SIGTERM: the runner stops each of its processes and exits once they have.
    await Promise.all([first, second].map((runner) => runner?.stop()));
    await receiver?.close();
    await Promise.all(scratches.map((scratch) => scratch.drop()));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("passes the caller's environment to the processes: tracing reaches the edge and the services", async () => {
    const key = await first.apiKey("Traced");
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
    const firstKey = await first.apiKey("First");
    const secondKey = await second.apiKey("Second");
    expect((await call(`${first.edgeUrl}/api/v1`, "GET", "/account", { key: firstKey })).body.name).toBe("First");
    expect((await call(`${second.edgeUrl}/api/v1`, "GET", "/account", { key: secondKey })).body.name).toBe("Second");
    // Each edge asks its own tenancy: the other stack's key means nothing there.
    expectError(await call(`${second.edgeUrl}/api/v1`, "GET", "/account", { key: firstKey }), 401, "invalid_api_key");
  });

  it("restarts a process that exits while the others keep serving", async () => {
    const key = await first.apiKey("Restarts");
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
    await first.waitFor("rendering to exit", async () =>
      first.output().includes("rendering exited (status 0); restarting it in 1 s"),
    );

    // Meanwhile: 503 for what needs rendering (each size is drawn anew), 200 for the rest.
    expectError(await api("GET", `/qr-codes/${code.body.id}/export?format=png&size=300`), 503, "service_unavailable");
    expect((await api("GET", `/workspaces/${workspace.id}`)).status).toBe(200);
    expect((await api("GET", "/account")).status).toBe(200);

    // Back by itself, under a new pid, and the edge draws again.
    await first.waitFor("rendering restarted", async () => [...first.output().matchAll(started)].length === 2);
    await first.waitFor(
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
      await second.waitFor("rendering to give up", async () =>
        second.output().includes("rendering could not start (status 2); not restarting it"),
      );
      expect(second.output()).toContain(`(GRPC_PORT): the address is already in use`);
      // It stays down, and the rest of the stack keeps serving.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect([...second.output().matchAll(started)]).toHaveLength(2);
      const key = await second.apiKey("Still serving");
      expect((await call(`${second.edgeUrl}/api/v1`, "GET", "/account", { key })).status).toBe(200);
      expect(second.child.exitCode).toBeNull();
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  }, 120_000);
});
