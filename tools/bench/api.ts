// API benchmark: what the platform's public API costs against a ceiling measured in the same run.
// The ceiling (api-ceiling.ts) is one node:http process with pg that runs the same SQL on the same
// schema by hand. The platform runs in both of its shapes: the services as separate processes from
// `npm run build`'s dist/ on Postgres with Redis (as the image runs them), and the embedded default
// (dist/embedded.js: one process on PGlite, as `npm start`). Each is loaded in turn by autocannon with
// 16 connections; every figure is printed with its ratio to the ceiling, and CPU per request is the
// sum over every process of the target (read from /proc; Postgres and Redis are not counted).
//
// DATABASE_URL names the Postgres server (default: local, user postgres); the bench makes and drops
// databases of its own (qrp_bench_api_<target>_<pid>, so runs side by side do not meet) and runs a redis-server of its own on a free port.
// BENCH_SECONDS (5) per operation after 1 s of warm-up, BENCH_ROUNDS (2) rounds with the targets in
// turn, the best of them kept; BENCH_TARGETS (ceiling,services,embedded) picks targets;
// BENCH_CPU_PROF=<dir> writes a CPU profile of every process there; BENCH_OPERATIONS (all) keeps only
// the operations it names (comma-separated: account, list, list-rules, get, create, export), so a
// profile can hold one operation alone. list-rules lists an account whose codes each carry
// BENCH_LIST_RULES (20) routing rules, beside list's codes without (on the services and embedded
// targets only: the ceiling knows no rules), and its CPU per request is set against list's.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import autocannon from "autocannon";
import { sql } from "kysely";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "@qrplatform/api/grpc-health";
import { SubscriptionTier, TenancyAdminService } from "@qrplatform/api/tenancy";
import { migrateSchema, openDatabase } from "@qrplatform/db";
import { adminQuery as runOnServer } from "@qrplatform/db/testing";
import { remoteTransport } from "@qrplatform/platform";
import { processEnvironment, START_ORDER, type ProcessName } from "@qrplatform/platform/layout";
import {
  credentials,
  freePort,
  killRedis,
  PAGE_TOKEN_SECRET,
  REPO_ROOT,
  startRedis,
  VISITOR_KEY_SECRET,
} from "@qrplatform/testing";
import { buildAll } from "../build/build.js";
import { failingRules, RULE_COUNTRIES } from "./failing-rules.js";
import * as catalogSchema from "../../services/catalog/migrations/index.js";
import * as linksSchema from "../../services/links/migrations/index.js";
import * as tenancySchema from "../../services/tenancy/migrations/index.js";

const SERVER_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WARM_UP_SECONDS = 1;
const CONNECTIONS = 16;
const CODES = 20;
/** The rules each code of list-rules carries, and the bound on what they may add to a list page's CPU. */
const RULES = Number(process.env.BENCH_LIST_RULES ?? 20);
const RULES_LIST_TARGET = 1.1;
const EXPORT_QUERY = "format=png&size=512";
const TARGETS = (process.env.BENCH_TARGETS ?? "ceiling,services,embedded").split(",") as Target[];
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const SECRETS = {
  SERVICE_TOKEN: credentials.serviceToken,
  ADMIN_TOKEN: credentials.adminToken,
  PAGE_TOKEN_SECRET,
  VISITOR_KEY_SECRET,
};

type Target = "ceiling" | "services" | "embedded";
const TARGET_NAMES: Record<Target, string> = {
  ceiling: "ceiling (node:http + pg)",
  services: "services (5 processes, Postgres)",
  embedded: "embedded (1 process, PGlite)",
};

const databaseUrl = (name: string) => {
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

async function freshDatabase(name: string): Promise<string> {
  await runOnServer(SERVER_URL, `drop database if exists ${name} with (force)`);
  await runOnServer(SERVER_URL, `create database ${name}`);
  return databaseUrl(name);
}

/** A child process whose CPU time we read, and what it printed. */
interface Child {
  readonly name: string;
  readonly child: ChildProcess;
  output(): string;
}

function launch(name: string, args: string[], env: Record<string, string>): Child {
  const profile = PROFILE_DIR
    ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`]
    : [];
  const child = spawn(process.execPath, [...profile, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  return { name, child, output: () => output };
}

async function stop(children: Child[]): Promise<void> {
  await Promise.all(
    children.map(async ({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await exited;
      clearTimeout(timer);
    }),
  );
}

async function until(what: string, ready: () => Promise<boolean>, output: () => string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (await ready().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not become ready:\n${output()}`);
}

/** CPU time (user and system) of a process so far, in microseconds, from /proc (Linux, 100 ticks a second). */
function cpuMicrosOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** A target ready to be loaded: its API base URL, a key, and the ids the operations name. */
interface Running {
  apiUrl: string;
  key: string;
  workspaceId: string;
  qrCodeId: string;
  /** The key of a second account whose CODES codes each carry RULES rules (the platform's targets). */
  rulesKey?: string;
  children: Child[];
  /** A new account with its key and an empty workspace: each run of creates starts with its capacity unused. */
  freshAccount(): Promise<{ key: string; workspaceId: string }>;
  close(): Promise<void>;
}

const json = (key: string) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });

async function newWorkspace(apiUrl: string, key: string): Promise<string> {
  const res = await fetch(`${apiUrl}/workspaces`, {
    method: "POST",
    headers: json(key),
    body: JSON.stringify({ name: "Bench" }),
  });
  return ((await res.json()) as { id: string }).id;
}

/** A workspace and CODES codes made through the REST API, as a client would. */
async function fillThroughApi(apiUrl: string, key: string): Promise<{ workspaceId: string; qrCodeId: string }> {
  const workspaceId = await newWorkspace(apiUrl, key);
  return { workspaceId, qrCodeId: await fillCodes(apiUrl, key, workspaceId) };
}

/** The rules of list-rules' codes: five countries each, as a campaign's rules would name them. */
const LIST_RULES = failingRules(RULES, RULE_COUNTRIES);

/** An account of another key (made by `newKey`) with CODES codes that each carry RULES rules; answers its key. */
async function rulesAccount(apiUrl: string, newKey: () => Promise<string>): Promise<string> {
  const key = await newKey();
  await fillCodes(apiUrl, key, await newWorkspace(apiUrl, key), { rules: LIST_RULES });
  return key;
}

/** CODES codes in the workspace, each with `extra` fields in its body; answers the first one's id. */
async function fillCodes(
  apiUrl: string,
  key: string,
  workspaceId: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  let qrCodeId = "";
  for (let i = 0; i < CODES; i++) {
    const res = await fetch(`${apiUrl}/workspaces/${workspaceId}/qr-codes`, {
      method: "POST",
      headers: json(key),
      body: JSON.stringify({ name: `Menu ${i}`, destination_url: `https://example.com/menu/${i}`, ...extra }),
    });
    if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
    qrCodeId ||= ((await res.json()) as { id: string }).id;
  }
  return qrCodeId;
}

/** An account on the Scale plan (capacity 5,000: creates are capacity-checked) whose hourly limit is never reached, and its key. */
async function accountAndKey(tenancyUrl: string): Promise<string> {
  const admin = createClient(TenancyAdminService, remoteTransport({ baseUrl: tenancyUrl, token: SECRETS.ADMIN_TOKEN }));
  return accountWith(admin);
}

async function accountWith(admin: ReturnType<typeof createClient<typeof TenancyAdminService>>): Promise<string> {
  const { account } = await admin.createAccount({ name: "Bench", subscriptionTier: SubscriptionTier.SCALE });
  await admin.updateAccount({ accountId: account!.id, hourlyRequestLimitOverride: 1_000_000_000n });
  const { secret } = await admin.createApiKey({ accountId: account!.id });
  return secret;
}

async function startServices(redisUrl: string): Promise<Running> {
  const databaseName = `qrp_bench_api_services_${process.pid}`;
  const url = await freshDatabase(databaseName);
  const dataDir = await mkdtemp(join(tmpdir(), "qrp-bench-api-"));
  const ports = Object.fromEntries(
    await Promise.all(START_ORDER.map(async (name) => [name, await freePort()])),
  ) as Record<ProcessName, number>;
  const metricsPorts = Object.fromEntries(
    await Promise.all(START_ORDER.map(async (name) => [name, await freePort()])),
  ) as Record<ProcessName, number>;
  const placement = {
    host: "127.0.0.1",
    ports,
    metricsPorts,
    redirectPort: await freePort(),
    secrets: SECRETS,
    databaseUrl: url,
    redisUrl,
    dataDir,
  };
  const children: Child[] = [];
  const close = async () => {
    await stop(children);
    await rm(dataDir, { recursive: true, force: true });
    await runOnServer(SERVER_URL, `drop database if exists ${databaseName} with (force)`);
  };
  try {
    for (const name of START_ORDER) {
      const child = launch(name, ["--enable-source-maps", `dist/${name}.js`], processEnvironment(name, placement));
      children.push(child);
      const ready =
        name === "edge"
          ? async () => (await fetch(`http://127.0.0.1:${ports.edge}/readyz`)).ok
          : async () =>
              (
                await createClient(
                  Health,
                  remoteTransport({ baseUrl: `http://127.0.0.1:${ports[name]}`, token: "" }),
                ).check({ service: "" })
              ).status === ServingStatus.SERVING;
      await until(name, ready, child.output);
    }
    const apiUrl = `http://127.0.0.1:${ports.edge}/api/v1`;
    const freshAccount = async () => {
      const key = await accountAndKey(`http://127.0.0.1:${ports.tenancy}`);
      return { key, workspaceId: await newWorkspace(apiUrl, key) };
    };
    const key = await accountAndKey(`http://127.0.0.1:${ports.tenancy}`);
    const rulesKey = await rulesAccount(apiUrl, () => accountAndKey(`http://127.0.0.1:${ports.tenancy}`));
    return { apiUrl, key, ...(await fillThroughApi(apiUrl, key)), rulesKey, children, freshAccount, close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function startEmbedded(): Promise<Running> {
  const dataDir = await mkdtemp(join(tmpdir(), "qrp-bench-api-embedded-"));
  const child = launch("embedded", ["--enable-source-maps", "dist/embedded.js"], {
    DATA_DIR: dataDir,
    PORT: "0",
    GRPC_PORT: "0",
    METRICS_PORT: "0",
  });
  const close = async () => {
    await stop([child]);
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await until("embedded", async () => /REST API\s+(\S+)/.test(child.output()), child.output);
    const apiUrl = /REST API\s+(\S+)/.exec(child.output())![1]!;
    const { address, token } = JSON.parse(await readFile(join(dataDir, "admin.json"), "utf8")) as {
      address: string;
      token: string;
    };
    const admin = createClient(TenancyAdminService, remoteTransport({ baseUrl: address, token }));
    const freshAccount = async () => {
      const key = await accountWith(admin);
      return { key, workspaceId: await newWorkspace(apiUrl, key) };
    };
    const key = await accountWith(admin);
    const rulesKey = await rulesAccount(apiUrl, () => accountWith(admin));
    return { apiUrl, key, ...(await fillThroughApi(apiUrl, key)), rulesKey, children: [child], freshAccount, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The ceiling on a fresh database migrated by the services' own migrations; its account and key made in SQL. */
async function startCeiling(imageFile: string): Promise<Running> {
  const databaseName = `qrp_bench_api_ceiling_${process.pid}`;
  const url = await freshDatabase(databaseName);
  const database = await openDatabase({ databaseUrl: url, dataDir: "" });
  for (const { SCHEMA, migrations } of [tenancySchema, catalogSchema, linksSchema])
    await migrateSchema(database.db, SCHEMA, migrations);
  // The account, its key and a workspace, written in SQL: the ceiling has no admin API.
  const freshAccount = async () => {
    const key = `qrp_${randomBytes(32).toString("base64url")}`;
    const [accountId, workspaceId] = [randomUUID(), randomUUID()];
    await sql`insert into tenancy.accounts (id, name, slug, subscription_tier, subscription_status, hourly_request_limit_override)
              values (${accountId}, 'Bench', ${accountId}, 'scale', 'active', 1000000000)`.execute(database.db);
    await sql`insert into tenancy.api_keys (id, account_id, name, secret_sha256, display_prefix, scopes)
              values (${randomUUID()}, ${accountId}, '', ${createHash("sha256").update(key).digest("hex")}, ${key.slice(0, 10)}, '{}')`.execute(
      database.db,
    );
    await sql`insert into catalog.workspaces (id, account_id, name, slug) values (${workspaceId}, ${accountId}, 'Bench', 'bench')`.execute(
      database.db,
    );
    return { key, workspaceId };
  };
  const { key, workspaceId } = await freshAccount();
  const child = launch("ceiling", ["--import", "tsx", join(REPO_ROOT, "tools/bench/api-ceiling.ts"), imageFile], {
    DATABASE_URL: url,
  });
  const close = async () => {
    await stop([child]);
    await database.close();
    await runOnServer(SERVER_URL, `drop database if exists ${databaseName} with (force)`);
  };
  try {
    await until("ceiling", async () => /"port"/.test(child.output()), child.output);
    const { port } = JSON.parse(/\{"port":\d+\}/.exec(child.output())![0]) as { port: number };
    const apiUrl = `http://127.0.0.1:${port}/api/v1`;
    return {
      apiUrl,
      key,
      workspaceId,
      qrCodeId: await fillCodes(apiUrl, key, workspaceId),
      children: [child],
      freshAccount,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

interface Operation {
  /** The operation's word for BENCH_OPERATIONS. */
  tag: string;
  name: string;
  status: number;
  /** Creates run on a fresh account each time, so capacity is checked and never reached. */
  freshAccount?: boolean;
  /** Runs as the account whose codes carry rules (rulesKey); targets without one are not loaded. */
  rulesAccount?: boolean;
  request(target: { qrCodeId: string; workspaceId: string }): autocannon.Request;
}

const OPERATIONS: Operation[] = [
  { tag: "account", name: "GET /account", status: 200, request: () => ({ method: "GET", path: "/api/v1/account" }) },
  {
    tag: "list",
    name: "GET /qr-codes?limit=10",
    status: 200,
    request: () => ({ method: "GET", path: "/api/v1/qr-codes?limit=10" }),
  },
  {
    tag: "list-rules",
    name: `GET /qr-codes?limit=10, codes with ${RULES} rules`,
    status: 200,
    rulesAccount: true,
    request: () => ({ method: "GET", path: "/api/v1/qr-codes?limit=10" }),
  },
  {
    tag: "get",
    name: "GET /qr-codes/{id}",
    status: 200,
    request: (t) => ({ method: "GET", path: `/api/v1/qr-codes/${t.qrCodeId}` }),
  },
  {
    tag: "create",
    name: "POST /workspaces/{id}/qr-codes",
    status: 201,
    freshAccount: true,
    request: (t) => ({
      method: "POST",
      path: `/api/v1/workspaces/${t.workspaceId}/qr-codes`,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Bench", destination_url: "https://example.com/menu?table=12" }),
    }),
  },
  {
    tag: "export",
    name: `GET /qr-codes/{id}/export (cached PNG)`,
    status: 200,
    request: (t) => ({ method: "GET", path: `/api/v1/qr-codes/${t.qrCodeId}/export?${EXPORT_QUERY}` }),
  },
];

const OPERATION_FILTER = process.env.BENCH_OPERATIONS?.split(",").filter(Boolean);
const SELECTED = OPERATIONS.filter((operation) => !OPERATION_FILTER || OPERATION_FILTER.includes(operation.tag));

interface Figures {
  perSecond: number;
  p99: number;
  cpuMicros: number;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

async function load(target: Running, operation: Operation, seconds: number): Promise<Figures> {
  const origin = new URL(target.apiUrl).origin;
  const latencies: number[] = [];
  const pids = target.children.map((c) => c.child.pid!);
  const account = operation.freshAccount
    ? await target.freshAccount()
    : { key: operation.rulesAccount ? target.rulesKey! : target.key, workspaceId: target.workspaceId };
  const request = operation.request({ qrCodeId: target.qrCodeId, workspaceId: account.workspaceId });
  const cpuBefore = pids.reduce((sum, pid) => sum + cpuMicrosOf(pid), 0);
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: origin,
        connections: CONNECTIONS,
        duration: seconds,
        headers: { authorization: `Bearer ${account.key}` },
        requests: [request],
      },
      (error, done) => (error ? reject(error as Error) : resolve(done)),
    );
    instance.on("response", (_client, _status, _bytes, ms) => latencies.push(ms));
  });
  const cpu = pids.reduce((sum, pid) => sum + cpuMicrosOf(pid), 0) - cpuBefore;
  const matching =
    result.statusCodeStats?.[String(operation.status) as keyof typeof result.statusCodeStats]?.count ?? 0;
  if (result.errors > 0 || result.timeouts > 0 || matching !== result.requests.total) {
    throw new Error(
      `${operation.name}: ${result.requests.total} requests, ${matching} answered ${operation.status}, ${result.errors} errors: ${JSON.stringify(result.statusCodeStats)}`,
    );
  }
  return {
    perSecond: result.requests.total / result.duration,
    p99: percentile(latencies, 99),
    cpuMicros: cpu / result.requests.total,
  };
}

const load1 = () => loadavg()[0]!;

/** Where BENCH_CPU_PROF's folder says when each target was loaded with which operation. */
const LOAD_WINDOWS_FILE = "load-windows.json";

/** One measured load: its target, its operation's tag, and when it began and ended, in microseconds of the monotonic clock (a CPU profile's clock). */
interface LoadWindow {
  target: Target;
  operation: string;
  from: number;
  to: number;
}

const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

async function main(): Promise<void> {
  console.log(
    `Building dist/ ... (load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")})`,
  );
  await buildAll();
  const redisPort = await freePort();
  const redis = await startRedis(redisPort);
  const scratch = await mkdtemp(join(tmpdir(), "qrp-bench-api-image-"));
  const imageFile = join(scratch, "export.png");
  const running = new Map<Target, Running>();
  // The best run of each target and operation, and the load average around every run.
  const best = new Map<string, Figures>();
  const loads: number[] = [];
  // When each measured load ran, on the clock CPU profiles use: profile-top.ts keeps those samples only.
  const windows: LoadWindow[] = [];
  try {
    // Every target stays up and each operation loads them in turn, round after round, so a neighbour's
    // work on this machine falls on all of them alike. The ceiling answers exports with the bytes the
    // services shape sends, so that starts first.
    const services = await startServices(`redis://127.0.0.1:${redisPort}`);
    running.set("services", services);
    const res = await fetch(`${services.apiUrl}/qr-codes/${services.qrCodeId}/export?${EXPORT_QUERY}`, {
      headers: json(services.key),
    });
    await writeFile(imageFile, Buffer.from(await res.arrayBuffer()));
    if (TARGETS.includes("embedded")) running.set("embedded", await startEmbedded());
    if (TARGETS.includes("ceiling")) running.set("ceiling", await startCeiling(imageFile));
    if (!TARGETS.includes("services")) {
      await services.close();
      running.delete("services");
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, operation] of SELECTED.entries()) {
        for (const [target, started] of running) {
          if (operation.rulesAccount && !started.rulesKey) continue;
          loads.push(load1());
          await load(started, operation, WARM_UP_SECONDS);
          const from = monotonicMicros();
          const figures = await load(started, operation, SECONDS);
          windows.push({ target, operation: operation.tag, from, to: monotonicMicros() });
          const key = `${target} ${i}`;
          if (!best.has(key) || figures.perSecond > best.get(key)!.perSecond) best.set(key, figures);
        }
      }
    }
    loads.push(load1());
  } finally {
    for (const started of running.values()) await started.close();
    await killRedis(redis);
    await rm(scratch, { recursive: true, force: true });
    if (PROFILE_DIR) await writeFile(join(PROFILE_DIR, LOAD_WINDOWS_FILE), JSON.stringify(windows));
  }

  console.log(
    `\nAPI benchmark: ${CONNECTIONS} connections, ${SECONDS} s per operation after ${WARM_UP_SECONDS} s of warm-up, targets in turn, ` +
      `best of ${ROUNDS} rounds; CPU per request summed over every process of the target (Postgres and Redis not counted).`,
  );
  console.log(
    `Load average (1 min) during the runs: ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)} on ${cpus().length} cores\n`,
  );
  console.log("| operation | target | requests/s | vs ceiling | p99 ms | p99 vs ceiling | CPU per request |");
  console.log("|---|---|---:|---:|---:|---:|---:|");
  const listIndex = SELECTED.findIndex((operation) => operation.tag === "list");
  SELECTED.forEach((operation, i) => {
    // The ceiling lists no rules: the rules list is set against its list of codes without.
    const base = best.get(`ceiling ${operation.rulesAccount ? listIndex : i}`);
    for (const target of ["ceiling", "services", "embedded"] as const) {
      const figures = best.get(`${target} ${i}`);
      if (!figures) continue;
      const ratio = base ? `${(figures.perSecond / base.perSecond).toFixed(2)}x` : "-";
      const p99Ratio = base ? `${(figures.p99 / base.p99).toFixed(1)}x` : "-";
      console.log(
        `| ${operation.name} | ${TARGET_NAMES[target]} | ${figures.perSecond.toFixed(0)} | ${ratio} | ${figures.p99.toFixed(1)} | ${p99Ratio} | ${(figures.cpuMicros / 1000).toFixed(2)} ms |`,
      );
    }
  });
  const rulesIndex = SELECTED.findIndex((operation) => operation.tag === "list-rules");
  if (listIndex >= 0 && rulesIndex >= 0) {
    console.log(
      `\nA list page of codes with ${RULES} rules each against the same page of codes without, CPU per request:\n`,
    );
    console.log("| target | without rules | with rules | ratio | target | met |\n|---|---:|---:|---:|---:|:---:|");
    for (const target of ["services", "embedded"] as const) {
      const plain = best.get(`${target} ${listIndex}`);
      const routed = best.get(`${target} ${rulesIndex}`);
      if (!plain || !routed) continue;
      const ratio = routed.cpuMicros / plain.cpuMicros;
      console.log(
        `| ${TARGET_NAMES[target]} | ${(plain.cpuMicros / 1000).toFixed(2)} ms | ${(routed.cpuMicros / 1000).toFixed(2)} ms | ` +
          `${ratio.toFixed(2)}x | ≤ ${RULES_LIST_TARGET.toFixed(2)}x | ${ratio <= RULES_LIST_TARGET ? "yes" : "**no**"} |`,
      );
    }
  }
}

await main();
