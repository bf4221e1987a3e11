// The operator as its own process (src/main.ts), configured from the environment: a kubeconfig file
// for the fake API server, the links service over gRPC. Two processes share the lease; SIGTERM releases
// it, SIGKILL leaves it to expire.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { DomainService } from "@qrplatform/api/links";
import type { Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import {
  credentials,
  exitWithin,
  freePort,
  MIGRATED_PLATFORM,
  PAGE_TOKEN_SECRET,
  type ServiceProcess,
  spawnService,
  waitForLog,
} from "@qrplatform/testing";
import { startFakeKubeApiServer, type FakeKubeApiServer } from "@qrplatform/fake-kube-apiserver";
import { buildLinks } from "@qrplatform/links";
import { createLogger, remoteTransport, serveGrpc, type GrpcServer } from "@qrplatform/platform";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CUSTOM_DOMAINS, LEASES, NAMESPACE } from "./support/cluster.js";
import { ACCOUNT } from "./support/objects.js";

const CRD = readFileSync(
  fileURLToPath(new URL("../../../charts/qr-platform/crds/customdomains.qr-platform.io.yaml", import.meta.url)),
  "utf8",
);
const LEASE_SECONDS = 2;

let database: Database;
let server: GrpcServer;
let kube: FakeKubeApiServer;
let directory: string;
let kubeconfig: string;
const started: ServiceProcess[] = [];

beforeAll(async () => {
  database = await openTestDatabase(MIGRATED_PLATFORM);
  const links = await buildLinks({
    db: database.db,
    shortLinkBaseUrl: "http://127.0.0.1:8080",
    pageTokenSecret: PAGE_TOKEN_SECRET,
  });
  server = await serveGrpc({
    modules: [links],
    credentials,
    logger: createLogger({ service: "test", level: "silent" }),
    host: "127.0.0.1",
    port: 0,
  });
  kube = await startFakeKubeApiServer({ crds: [CRD], namespace: NAMESPACE });
  directory = await mkdtemp(join(tmpdir(), "operator-"));
  kubeconfig = join(directory, "kubeconfig");
  await writeFile(kubeconfig, kube.kubeConfigYaml());
});

afterAll(async () => {
  for (const process of started) process.child.kill("SIGKILL");
  await Promise.all(started.map((process) => process.exited));
  await kube?.close();
  await server?.close();
  await database?.close();
  if (directory) await rm(directory, { recursive: true, force: true });
});

async function startOperator(podName: string): Promise<{ process: ServiceProcess; health: string }> {
  const healthPort = await freePort();
  const process = spawnService("dist/operator.js", {
    KUBECONFIG: kubeconfig,
    OPERATOR_NAMESPACE: NAMESPACE,
    LINKS_URL: `http://127.0.0.1:${server.port}`,
    ADMIN_TOKEN: credentials.adminToken,
    REDIRECTOR_SERVICE: "qr-platform-links",
    CLUSTER_ISSUER: "letsencrypt",
    POD_NAME: podName,
    HEALTH_HOST: "127.0.0.1",
    HEALTH_PORT: String(healthPort),
    LEASE_DURATION_SECONDS: String(LEASE_SECONDS),
    FULL_RESYNC_SECONDS: "1",
    LOG_LEVEL: "info",
  });
  started.push(process);
  return { process, health: `http://127.0.0.1:${healthPort}` };
}

const holder = () =>
  (kube.get(LEASES, NAMESPACE, "qr-platform-operator")?.spec as { holderIdentity?: string } | undefined)
    ?.holderIdentity;

async function status(url: string): Promise<number | undefined> {
  return fetch(url).then(
    (res) => res.status,
    () => undefined,
  );
}

describe("the operator process", () => {
  it("becomes ready and leads, projects domains, hands the lease over on SIGTERM, and is replaced within the lease when killed", async () => {
    const a = await startOperator("operator-a");
    await expect.poll(() => status(`${a.health}/readyz`), { timeout: 20_000 }).toBe(200);
    expect(await status(`${a.health}/healthz`)).toBe(200);
    await expect.poll(holder, { timeout: 10_000 }).toBe("operator-a");

    const links = createClient(
      DomainService,
      remoteTransport({ baseUrl: `http://127.0.0.1:${server.port}`, token: credentials.adminToken }),
    );
    await links.createDomain({ accountId: ACCOUNT, hostname: "process.example.com" });
    await expect
      .poll(() => kube.get(CUSTOM_DOMAINS, undefined, "process.example.com")?.spec, { timeout: 10_000 })
      .toMatchObject({ accountId: ACCOUNT });

    const b = await startOperator("operator-b");
    await expect.poll(() => status(`${b.health}/readyz`), { timeout: 20_000 }).toBe(200);
    expect(holder()).toBe("operator-a");

    // SIGTERM: the lease is released, and the standby takes it well before it would have expired.
    a.process.child.kill("SIGTERM");
    expect(await exitWithin(a.process, 10_000)).toBe(0);
    await waitForLog(a.process, (line) => line.msg === "released the leader lease", 1000);
    await expect.poll(holder, { timeout: (LEASE_SECONDS * 1000) / 2 }).toBe("operator-b");

    // SIGKILL: nobody releases; a new replica takes over once the lease has gone unrenewed for its duration.
    const c = await startOperator("operator-c");
    await expect.poll(() => status(`${c.health}/readyz`), { timeout: 20_000 }).toBe(200);
    b.process.child.kill("SIGKILL");
    await b.process.exited;
    await expect.poll(holder, { timeout: LEASE_SECONDS * 1000 + 2000 }).toBe("operator-c");
    await links.createDomain({ accountId: ACCOUNT, hostname: "after.example.com" });
    await expect
      .poll(() => kube.get(CUSTOM_DOMAINS, undefined, "after.example.com")?.spec, { timeout: 10_000 })
      .toMatchObject({ accountId: ACCOUNT });
  });
});
