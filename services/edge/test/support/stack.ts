// The platform under test, in one of two shapes: every service in this process behind in-process
// transports, or every service (and the edge) as its own process, compiled (dist/), talking real gRPC.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "@qrplatform/api/grpc-health";
import { TenancyAdminService } from "@qrplatform/api/tenancy";
import { QrCodeService } from "@qrplatform/api/catalog";
import { DomainService } from "@qrplatform/api/links";
import { MemoryDns, TestDnsServer } from "@qrplatform/testing/dns-server";
import type { WebhookOptions } from "@qrplatform/catalog";
import { composePlatform } from "@qrplatform/embedded/compose";
import { createScratchDatabase, openTestDatabase } from "@qrplatform/db/testing";
import { credentials, freePort, MIGRATED_PLATFORM, PAGE_TOKEN_SECRET, VISITOR_KEY_SECRET } from "@qrplatform/testing";
import {
  createLogger,
  inProcessTransport,
  lateHandler,
  listenHttp,
  remoteTransport,
  type GrpcModule,
  type Logger,
} from "@qrplatform/platform";
import { processEnvironment, START_ORDER, type ProcessName } from "@qrplatform/platform/layout";
import type { Renderer, RenderingOptions } from "@qrplatform/rendering";
import { memoryQuotaStore, redisQuotaStore } from "../../src/http/quota.js";

export type StackMode = "in-process" | "processes";

export type { ProcessName };

/** A running platform: the REST base URL and an admin client of tenancy to set accounts up. */
export interface Stack {
  readonly baseUrl: string;
  readonly admin: Client<typeof TenancyAdminService>;
  /** The catalog's QR-code service, called with the service credential. */
  readonly catalog: Client<typeof QrCodeService>;
  /** The links service's domains, called with the admin credential (as qrctl does). */
  readonly domains: Client<typeof DomainService>;
  /** Where short links are answered, whatever the Host header names. */
  readonly redirectorUrl: string;
  /**
   * The TXT records the links service verifies custom domains against: in memory in one process, a
   * real DNS server for the links process of the processes shape.
   */
  readonly dns: MemoryDns | TestDnsServer;
  /** How many images the rendering service has drawn; only the in-process shape can count them. */
  readonly renderCount?: () => number;
  /** The Postgres database the processes shape runs on (when DATABASE_URL is set), for assertions in SQL. */
  readonly databaseUrl?: string;
  /** The processes shape's gRPC addresses, by service. */
  readonly grpcUrls?: Readonly<Record<Exclude<ProcessName, "edge">, string>>;
  /** The processes shape's processes, to kill and start again. */
  readonly processes?: Record<ProcessName, StackProcess>;
  /** The processes shape's Prometheus endpoints (`…/metrics`), by process. */
  readonly metricsUrls?: Readonly<Record<ProcessName, string>>;
  /** The database every service writes to; only in the in-process shape. */
  readonly db?: Kysely<any>;
  /** Every gRPC module, each behind in-process transports encoding every message (binary and JSON) with the admin credential; only in the in-process shape. */
  readonly grpcModules?: ReadonlyArray<{
    readonly module: GrpcModule;
    readonly transport: Transport;
    readonly jsonTransport: Transport;
  }>;
  /** The rendering service's renderer; only in the in-process shape. */
  readonly renderer?: Renderer;
  /**
   * Starts another edge in front of the same services (in this process, or as its own process), as a
   * second replica behind a load balancer; closed with the stack.
   */
  startEdgeReplica(options?: EdgeReplicaOptions): Promise<EdgeReplica>;
  close(): Promise<void>;
}

/** How a further edge replica differs from the first. */
export interface EdgeReplicaOptions {
  /** How long a retry waits for the same request running elsewhere before 409 (IDEMPOTENCY_WAIT_MS). */
  readonly idempotencyWaitMs?: number;
  /** The processes shape: NODE_OPTIONS of the replica's process, such as a smaller heap. */
  readonly nodeOptions?: string;
}

/** A further edge replica. */
export interface EdgeReplica {
  readonly baseUrl: string;
  /** The processes shape's replica process, to stop and start again. */
  readonly process?: StackProcess;
  /** The processes shape's replica's Prometheus endpoint. */
  readonly metricsUrl?: string;
}

/** One process of the processes shape. */
export interface StackProcess {
  /** The running process (a new one after each start). */
  readonly child: ChildProcess;
  /** Sends the signal (SIGKILL by default, as a crash) and waits until the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the process again with the same port and environment, and waits until it is ready. */
  start(): Promise<void>;
  /** Everything its processes printed so far, across restarts. */
  output(): string;
}

export { credentials };
const pageTokenSecret = PAGE_TOKEN_SECRET;
const visitorKeySecret = VISITOR_KEY_SECRET;
const secrets = { ...credentials, pageTokenSecret, visitorKeySecret };
const defaultLogger = createLogger({ service: "test", level: process.env.LOG_LEVEL ?? "silent" });
const REPO_ROOT = resolve(import.meta.dirname, "../../../..");

/** Where the edge counts hourly quotas: this Redis, else REDIS_URL from the environment, else memory. */
export interface StackOptions {
  readonly redisUrl?: string;
  /** The in-process shape's logger; silent unless LOG_LEVEL says otherwise. */
  readonly logger?: Logger;
  /** The processes shape: the Postgres database to run on, instead of a scratch one on DATABASE_URL's server. */
  readonly databaseUrl?: string;
  /** The processes shape: extra environment for some of its processes. */
  readonly env?: Partial<Record<ProcessName, Record<string, string>>>;
  /** The in-process shape's rendering service: its concurrency and queues. */
  readonly rendering?: RenderingOptions;
  /**
   * Webhook delivery: in process, the catalog's workers run only when this is given; as processes they
   * always run, and these become the catalog's WEBHOOK_* variables.
   */
  /** The in-process shape's edge body limit; 64 KiB unless given. */
  readonly maxBodyBytes?: number;
  readonly webhooks?: Pick<
    Partial<WebhookOptions>,
    "pollIntervalMs" | "retryScheduleMs" | "scanPeriodMs" | "timeoutMs" | "allowLoopback"
  >;
}

export async function startStack(mode: StackMode, options: StackOptions = {}): Promise<Stack> {
  return mode === "in-process" ? startInProcess(options) : startProcesses(options);
}

/**
 * The tests' visitors reach short links as if through a proxy on loopback (a CDN, say), so that a test
 * can scan from other addresses and countries (X-Forwarded-For, CF-IPCountry) as production would
 * see them; a request without those headers is the loopback visitor of a country unknown, as before.
 */
const VISITORS_BEHIND_A_PROXY = { trustedProxies: ["loopback"], countryHeader: "cf-ipcountry" };

async function startInProcess(options: StackOptions): Promise<Stack> {
  const logger = options.logger ?? defaultLogger;
  const database = await openTestDatabase(MIGRATED_PLATFORM);
  const dns = new MemoryDns();
  // With REDIS_URL (CI's second pass) quotas are counted in Redis, as in production; else in memory.
  const redisUrl = options.redisUrl ?? process.env.REDIS_URL;
  const quotas = redisUrl ? await redisQuotaStore(redisUrl, logger) : memoryQuotaStore();
  // Like the embedded platform: one port for the API and the short links it hands out.
  const handler = lateHandler();
  const http = await listenHttp({ handler: handler.listener, host: "127.0.0.1", port: 0, logger, name: "edge" });
  const origin = `http://127.0.0.1:${http.port}`;
  const platform = await composePlatform(
    { database, secrets, logger, quotas, lookupTxt: dns.lookupTxt },
    {
      shortLinkBaseUrl: origin,
      customDomainScheme: "http",
      maxBodyBytes: options.maxBodyBytes ?? 64 * 1024,
      rendering: options.rendering,
      webhooks: options.webhooks,
      // Webhook workers only for the tests that give their options; no reconciler under any test.
      workers: { reconciler: false, webhooks: options.webhooks !== undefined },
      ...VISITORS_BEHIND_A_PROXY,
    },
  );
  handler.set(platform.listener);
  const { tenancy, catalog, links, rendering } = platform.modules;
  const admin = (modules: GrpcModule[], encoding?: "binary" | "json"): Transport =>
    inProcessTransport({ modules, credentials, logger, token: credentials.adminToken, encoding });
  const replicas: { close(): Promise<void> }[] = [];
  return {
    baseUrl: `${origin}/api/v1`,
    admin: createClient(TenancyAdminService, admin([tenancy])),
    catalog: createClient(
      QrCodeService,
      inProcessTransport({ modules: [catalog], credentials, logger, token: credentials.serviceToken }),
    ),
    domains: createClient(DomainService, admin([links])),
    redirectorUrl: origin,
    dns,
    renderCount: () => rendering.renderer.renders,
    renderer: rendering.renderer,
    db: database.db,
    grpcModules: [tenancy, catalog, links, rendering].map((module) => ({
      module,
      transport: admin([module], "binary"),
      jsonTransport: admin([module], "json"),
    })),
    async startEdgeReplica(replica = {}) {
      const handler = platform.edgeReplica({ idempotencyWaitMs: replica.idempotencyWaitMs });
      const listening = await listenHttp({ handler, host: "127.0.0.1", port: 0, logger, name: "edge replica" });
      replicas.push(listening);
      return { baseUrl: `http://127.0.0.1:${listening.port}/api/v1` };
    },
    async close() {
      await Promise.all(replicas.map((replica) => replica.close()));
      await http.close();
      await platform.close();
      await quotas.close();
      await dns.close();
      await database.close();
    },
  };
}

/**
 * One process, started at once from its compiled entry point (dist/<name>.js, which the test run's
 * global setup builds, as the container image runs it); its output is kept so a failed start can say why.
 */
function launch(name: ProcessName, env: Record<string, string>, isReady: () => Promise<boolean>): StackProcess {
  let output = "";
  let child: ChildProcess;
  const entry = `dist/${name}.js`;
  const spawnChild = () => {
    child = spawn(process.execPath, ["--enable-source-maps", entry], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (chunk) => (output += chunk));
    child.stderr!.on("data", (chunk) => (output += chunk));
  };
  spawnChild();
  return {
    get child() {
      return child;
    },
    output: () => output,
    async kill(signal = "SIGKILL") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill(signal);
      await exited;
    },
    async start() {
      spawnChild();
      await waitUntil(entry, isReady, () => output);
    },
  };
}

async function waitUntil(
  what: string,
  ready: () => Promise<boolean>,
  output: () => string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await ready().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not become ready:\n${output()}`);
}

async function startProcesses(options: StackOptions): Promise<Stack> {
  const scratch = options.databaseUrl ? undefined : await createScratchDatabase();
  const databaseUrl = options.databaseUrl ?? scratch?.url;
  const dns = await new TestDnsServer().start();
  const dataDir = mkdtempSync(join(tmpdir(), "qrp-stack-"));
  const ports = Object.fromEntries(
    await Promise.all(START_ORDER.map(async (name) => [name, await freePort()])),
  ) as Record<ProcessName, number>;
  const placement = {
    host: "127.0.0.1",
    ports,
    redirectPort: await freePort(),
    metricsPorts: Object.fromEntries(
      await Promise.all(START_ORDER.map(async (name) => [name, await freePort()])),
    ) as Record<ProcessName, number>,
    secrets: {
      SERVICE_TOKEN: credentials.serviceToken,
      ADMIN_TOKEN: credentials.adminToken,
      PAGE_TOKEN_SECRET: pageTokenSecret,
      VISITOR_KEY_SECRET: visitorKeySecret,
    },
    databaseUrl,
    redisUrl: process.env.REDIS_URL,
    dataDir,
  };
  const url = (name: ProcessName) => `http://127.0.0.1:${ports[name]}`;
  // What the tests need beyond the layout: custom domains verified against the test's DNS server over
  // plain HTTP, and small bodies so that limits are cheap to reach.
  const testEnv: Partial<Record<ProcessName, Record<string, string>>> = {
    links: {
      CUSTOM_DOMAIN_SCHEME: "http",
      DNS_RESOLVER: dns.address,
      TRUSTED_PROXIES: VISITORS_BEHIND_A_PROXY.trustedProxies.join(","),
      COUNTRY_HEADER: VISITORS_BEHIND_A_PROXY.countryHeader,
    },
    edge: { MAX_BODY_BYTES: String(64 * 1024) },
    catalog: webhookEnvOf(options.webhooks),
  };
  const isReady = (name: ProcessName) => {
    if (name === "edge") return async () => (await fetch(`${url("edge")}/readyz`)).ok;
    const health = createClient(Health, remoteTransport({ baseUrl: url(name), token: "" }));
    return async () => (await health.check({ service: "" })).status === ServingStatus.SERVING;
  };
  const environment = (name: ProcessName) => ({
    ...processEnvironment(name, placement),
    ...testEnv[name],
    ...options.env?.[name],
  });
  const processes = Object.fromEntries(
    START_ORDER.map((name) => [name, launch(name, environment(name), isReady(name))]),
  ) as Record<ProcessName, StackProcess>;
  const replicas: StackProcess[] = [];
  const stopAll = async () => {
    await Promise.all([...Object.values(processes), ...replicas].map((service) => service.kill("SIGTERM")));
    rmSync(dataDir, { recursive: true, force: true });
    await dns.close();
    await scratch?.drop();
  };

  try {
    for (const name of START_ORDER) await waitUntil(name, isReady(name), processes[name].output);
  } catch (error) {
    await stopAll();
    throw error;
  }

  return {
    baseUrl: `${url("edge")}/api/v1`,
    admin: createClient(
      TenancyAdminService,
      remoteTransport({ baseUrl: url("tenancy"), token: credentials.adminToken }),
    ),
    catalog: createClient(QrCodeService, remoteTransport({ baseUrl: url("catalog"), token: credentials.serviceToken })),
    domains: createClient(DomainService, remoteTransport({ baseUrl: url("links"), token: credentials.adminToken })),
    redirectorUrl: `http://127.0.0.1:${placement.redirectPort}`,
    dns,
    databaseUrl,
    grpcUrls: { tenancy: url("tenancy"), links: url("links"), rendering: url("rendering"), catalog: url("catalog") },
    processes,
    metricsUrls: Object.fromEntries(
      START_ORDER.map((name) => [name, `http://127.0.0.1:${placement.metricsPorts[name]}/metrics`]),
    ) as Record<ProcessName, string>,
    async startEdgeReplica(replica = {}) {
      const port = await freePort();
      const metricsPort = await freePort();
      const env = {
        ...environment("edge"),
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        ...(replica.idempotencyWaitMs !== undefined && { IDEMPOTENCY_WAIT_MS: String(replica.idempotencyWaitMs) }),
        ...(replica.nodeOptions !== undefined && { NODE_OPTIONS: replica.nodeOptions }),
      };
      const baseUrl = `http://127.0.0.1:${port}`;
      const edge = launch("edge", env, async () => (await fetch(`${baseUrl}/readyz`)).ok);
      replicas.push(edge);
      await waitUntil("edge replica", async () => (await fetch(`${baseUrl}/readyz`)).ok, edge.output);
      return { baseUrl: `${baseUrl}/api/v1`, process: edge, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` };
    },
    close: stopAll,
  };
}

/** The catalog's WEBHOOK_* variables for the options a test gives. */
function webhookEnvOf(webhooks: StackOptions["webhooks"]): Record<string, string> {
  const env: Record<string, string> = {};
  if (!webhooks) return env;
  if (webhooks.pollIntervalMs !== undefined) env.WEBHOOK_POLL_SECONDS = String(webhooks.pollIntervalMs / 1000);
  if (webhooks.retryScheduleMs !== undefined)
    env.WEBHOOK_RETRY_SCHEDULE_SECONDS = webhooks.retryScheduleMs.map((ms) => ms / 1000).join(",");
  if (webhooks.scanPeriodMs !== undefined) env.WEBHOOK_SCAN_PERIOD_SECONDS = String(webhooks.scanPeriodMs / 1000);
  if (webhooks.timeoutMs !== undefined) env.WEBHOOK_TIMEOUT_SECONDS = String(webhooks.timeoutMs / 1000);
  if (webhooks.allowLoopback !== undefined) env.WEBHOOK_ALLOW_LOOPBACK = String(webhooks.allowLoopback);
  return env;
}
