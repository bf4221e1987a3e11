// Metrics benchmark: what serving Prometheus metrics costs on the redirect path and on the API. Two
// `npm start` platforms run side by side as child processes, one with METRICS_PORT=off (no instrument
// counts anything) and one serving /metrics and scraped every second, as Prometheus would. Each is
// loaded in turn, twice, with scans of a short link and with GET /api/v1/account; the table gives the
// throughput and the platform's CPU time per request with metrics on, each beside the same run's
// figure with them off. On a shared machine compare the CPU per request: throughput follows the neighbours.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { exitWithin, REPO_ROOT, spawnService, type ServiceProcess } from "@qrplatform/testing";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = 2;
const CONNECTIONS = 20;
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1";

interface Platform {
  process: ServiceProcess;
  dataDir: string;
  apiUrl: string;
  metricsUrl: string | undefined;
  key: string;
  /** The path of a short link on the platform's own address. */
  slugPath: string;
}

function qrctl(dataDir: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(REPO_ROOT, "tools/qrctl/bin/qrctl.js"), ...args],
      { cwd: REPO_ROOT, env: { PATH: process.env.PATH, DATA_DIR: dataDir } },
      (error, stdout, stderr) => (error ? reject(new Error(stderr)) : resolve(stdout)),
    );
  });
}

async function startPlatform(metrics: boolean): Promise<Platform> {
  const dataDir = await mkdtemp(join(tmpdir(), "qrp-bench-metrics-"));
  const child = spawnService("services/embedded/src/main.ts", {
    DATA_DIR: dataDir,
    PORT: "0",
    GRPC_PORT: "0",
    METRICS_PORT: metrics ? "0" : "off",
    LOG_LEVEL: "warn",
  });
  const deadline = Date.now() + 60_000;
  while (!/REST API\s+(\S+)/.test(child.output()) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  const apiUrl = /REST API\s+(\S+)/.exec(child.output())?.[1];
  if (!apiUrl) throw new Error(`npm start did not print its API URL:\n${child.output()}`);
  const metricsUrl = /metrics\s+(http\S+)/.exec(child.output())?.[1];
  // A limit so high it is never reached: every request is counted against the quota, as in production.
  const { id } = JSON.parse(
    await qrctl(dataDir, ["accounts", "create", "--name", "Bench", "--plan", "enterprise", "--json"]),
  ) as { id: string };
  await qrctl(dataDir, ["accounts", "update", id, "--hourly-limit", "1000000000"]);
  const { key } = JSON.parse(await qrctl(dataDir, ["keys", "create", "--account", id, "--json"])) as { key: string };
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const workspace = (await (
    await fetch(`${apiUrl}/workspaces`, { method: "POST", headers, body: JSON.stringify({ name: "Bench" }) })
  ).json()) as { id: string };
  const code = (await (
    await fetch(`${apiUrl}/workspaces/${workspace.id}/qr-codes`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: "Bench", destination_url: "https://example.com/menu" }),
    })
  ).json()) as { vanity_url: string };
  return { process: child, dataDir, apiUrl, metricsUrl, key, slugPath: new URL(code.vanity_url).pathname };
}

interface Result {
  perSecond: number;
  p99: number;
  /** The platform process's CPU time per request, in microseconds: steadier than throughput on a shared machine. */
  cpuMicros: number;
}

/** A process's CPU time so far (user and system), in microseconds, from /proc (Linux). */
function cpuMicrosOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 per second).
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

async function load(
  platform: Platform,
  url: string,
  headers: Record<string, string>,
  expected: number,
): Promise<Result> {
  const cpuBefore = cpuMicrosOf(platform.process.child.pid!);
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  const cpu = cpuMicrosOf(platform.process.child.pid!) - cpuBefore;
  const matching = result.statusCodeStats?.[String(expected) as keyof typeof result.statusCodeStats]?.count ?? 0;
  if (result.errors > 0 || matching !== result.requests.total)
    throw new Error(
      `${url}: ${result.requests.total} requests, ${matching} answered ${expected}, ${result.errors} errors`,
    );
  return {
    perSecond: result.requests.total / result.duration,
    p99: result.latency.p99,
    cpuMicros: cpu / result.requests.total,
  };
}

async function main(): Promise<void> {
  const off = await startPlatform(false);
  const on = await startPlatform(true);
  if (off.metricsUrl || !on.metricsUrl)
    throw new Error("expected metrics off on the first platform and on on the second");
  // Prometheus scrapes while the load runs; a scrape is part of what metrics cost.
  const scraper = setInterval(() => void fetch(on.metricsUrl!).then((res) => res.arrayBuffer()), 1000);
  const paths = {
    "redirect (scan of a short link)": (p: Platform) =>
      load(p, `${p.apiUrl.replace(/\/api\/v1$/, "")}${p.slugPath}`, { "user-agent": IPHONE }, 302),
    "API (GET /api/v1/account)": (p: Platform) =>
      load(p, `${p.apiUrl}/account`, { authorization: `Bearer ${p.key}` }, 200),
  };
  const results: Record<string, { off: Result[]; on: Result[] }> = {};
  try {
    for (const [name, run] of Object.entries(paths)) {
      results[name] = { off: [], on: [] };
      await run(off);
      await run(on);
      // Alternating, so drift on a shared machine falls on both sides.
      for (let round = 0; round < ROUNDS; round++) {
        results[name].off.push(await run(off));
        results[name].on.push(await run(on));
      }
    }
  } finally {
    clearInterval(scraper);
    for (const platform of [off, on]) {
      platform.process.child.kill("SIGTERM");
      await exitWithin(platform.process, 30_000).catch(() => platform.process.child.kill("SIGKILL"));
      await rm(platform.dataDir, { recursive: true, force: true });
    }
  }

  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  console.log(
    `\nMetrics cost under npm start: ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s per side; /metrics scraped every second\n`,
  );
  console.log(
    "| path | req/s off | req/s on | on/off | p99 ms off | p99 ms on | CPU per request off | CPU per request on | on/off |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const [name, { off: offRuns, on: onRuns }] of Object.entries(results)) {
    const [offRate, onRate] = [mean(offRuns.map((r) => r.perSecond)), mean(onRuns.map((r) => r.perSecond))];
    const [offP99, onP99] = [mean(offRuns.map((r) => r.p99)), mean(onRuns.map((r) => r.p99))];
    const [offCpu, onCpu] = [mean(offRuns.map((r) => r.cpuMicros)), mean(onRuns.map((r) => r.cpuMicros))];
    console.log(
      `| ${name} | ${offRate.toFixed(0)} | ${onRate.toFixed(0)} | ${(onRate / offRate).toFixed(2)}x | ${offP99.toFixed(1)} | ${onP99.toFixed(1)} | ` +
        `${offCpu.toFixed(0)} µs | ${onCpu.toFixed(0)} µs | ${(onCpu / offCpu).toFixed(2)}x |`,
    );
  }
}

await main();
