// What tracing costs: the embedded platform (`npm start`) under load with tracing off, on with the
// default sampling (every API request, one redirect in a hundred), and on with everything sampled,
// each in its own process, exporting OTLP to a local collector that discards what it is sent.
// Measured: warm short-link redirects and one API call (GET a workspace): throughput, p99, and the
// platform process's CPU time per request, which a busy shared machine disturbs less than throughput.
// The settings take turns for BENCH_ROUNDS rounds and each keeps its best round. Figures are from one
// run on this machine; compare the ratios to "off", which are from the same run.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import autocannon from "autocannon";
import { SubscriptionTier, TenancyAdminService } from "@qrplatform/api/tenancy";
import { remoteTransport } from "@qrplatform/platform";
import { freePort, REPO_ROOT } from "@qrplatform/testing";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = 20;
/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux). */
const TICKS = 100;

interface Setting {
  name: string;
  env: Record<string, string>;
}

/** An OTLP/HTTP endpoint that reads and drops every export, counting them. */
async function startSink() {
  let exports = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      exports++;
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A process's CPU time so far (user and system), in milliseconds. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
}

interface LoadResult {
  perSecond: number;
  p99: number;
  /** The platform's CPU time per request, in microseconds. */
  cpuMicros: number;
}

async function load(
  pid: number,
  url: string,
  headers: Record<string, string>,
  expected: number,
  duration = SECONDS,
): Promise<LoadResult> {
  const cpuBefore = cpuMs(pid);
  const result = await autocannon({ url, connections: CONNECTIONS, duration, headers });
  const cpu = cpuMs(pid) - cpuBefore;
  const answered = result.statusCodeStats?.[String(expected) as keyof typeof result.statusCodeStats]?.count ?? 0;
  if (result.errors > 0 || answered !== result.requests.total)
    throw new Error(`${url}: ${result.requests.total} requests, ${answered} answered ${expected}`);
  return {
    perSecond: result.requests.total / result.duration,
    p99: result.latency.p99,
    cpuMicros: (cpu * 1000) / result.requests.total,
  };
}

async function measure(setting: Setting) {
  const dataDir = mkdtempSync(join(tmpdir(), "qrp-bench-telemetry-"));
  const [port, grpcPort] = await Promise.all([freePort(), freePort()]);
  const child = spawn(process.execPath, ["--import", "tsx", "services/embedded/src/main.ts"], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      DATA_DIR: dataDir,
      PORT: String(port),
      GRPC_PORT: String(grpcPort),
      LOG_LEVEL: "warn",
      ...setting.env,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let ready = false; !ready; ) {
      if (child.exitCode !== null) throw new Error("the platform exited");
      ready = await fetch(`${base}/readyz`).then(
        (res) => res.ok,
        () => false,
      );
      if (!ready) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const { token } = JSON.parse(readFileSync(join(dataDir, "admin.json"), "utf8")) as { token: string };
    const admin = createClient(
      TenancyAdminService,
      remoteTransport({ baseUrl: `http://127.0.0.1:${grpcPort}`, token }),
    );
    const { account } = await admin.createAccount({ name: "Bench", subscriptionTier: SubscriptionTier.ORIGIN });
    await admin.updateAccount({ accountId: account!.id, hourlyRequestLimitOverride: BigInt(100_000_000) });
    const { secret } = await admin.createApiKey({ accountId: account!.id, scopes: [] });
    const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
    const post = async (path: string, body: unknown) =>
      (await (
        await fetch(`${base}/api/v1${path}`, { method: "POST", headers, body: JSON.stringify(body) })
      ).json()) as Record<string, string>;
    const workspace = await post("/workspaces", { name: "Bench" });
    const qrCode = await post(`/workspaces/${workspace.id}/qr-codes`, {
      name: "Menu",
      destination_url: "https://example.com/menu",
    });
    const shortLink = `${base}${new URL(qrCode.vanity_url!).pathname}`;
    const phone = {
      "user-agent":
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1",
    };
    // The API first: the scans the redirects leave behind are stored afterwards, not during it. Each
    // load runs once to warm up (caches, code paths) before the measured run.
    const apiCall = `${base}/api/v1/workspaces/${workspace.id}`;
    const pid = child.pid!;
    await load(pid, apiCall, { authorization: headers.authorization }, 200, 2);
    const api = await load(pid, apiCall, { authorization: headers.authorization }, 200);
    await load(pid, shortLink, phone, 302, 2);
    const redirects = await load(pid, shortLink, phone, 302);
    return { redirects, api };
  } finally {
    child.kill("SIGTERM");
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const sink = await startSink();
const traced = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" };
const settings: Setting[] = [
  { name: "tracing off", env: {} },
  { name: "tracing on, default sampling", env: traced },
  { name: "tracing on, every request", env: { ...traced, TRACES_HOT_PATH_RATIO: "1" } },
];
const best = new Map<Setting, { redirects: LoadResult; api: LoadResult }>();
const better = (a: LoadResult | undefined, b: LoadResult) => (a && a.perSecond >= b.perSecond ? a : b);
for (let round = 0; round < ROUNDS; round++) {
  for (const setting of settings) {
    const { redirects, api } = await measure(setting);
    const kept = best.get(setting);
    best.set(setting, { redirects: better(kept?.redirects, redirects), api: better(kept?.api, api) });
  }
}
await sink.close();

const off = best.get(settings[0]!)!;
const ratio = (value: number, reference: number) => `${(value / reference).toFixed(2)}×`;
const row = (result: LoadResult, reference: LoadResult) =>
  `${result.perSecond.toFixed(0).padStart(7)} ${ratio(result.perSecond, reference.perSecond).padStart(6)} ${String(result.p99).padStart(6)} ${result.cpuMicros.toFixed(0).padStart(7)} ${ratio(result.cpuMicros, reference.cpuMicros).padStart(6)}`;
console.log(
  `\nTracing cost, embedded platform, ${CONNECTIONS} connections, ${SECONDS} s, best of ${ROUNDS} rounds (ratios against "off", same run)`,
);
console.log(
  `${"".padEnd(30)} | redirects: /s  ratio p99 ms  CPU µs  ratio | GET workspace: /s ratio p99 ms CPU µs  ratio`,
);
for (const setting of settings) {
  const { redirects, api } = best.get(setting)!;
  console.log(`${setting.name.padEnd(30)} | ${row(redirects, off.redirects)}      | ${row(api, off.api)}`);
}
console.log(`OTLP exports received: ${sink.exports()}`);
