// Export burst benchmark: `npm start` as a child process, one account firing 100 concurrent large PNG
// exports (all different, so the cache cannot help) while another account exports one image and a
// client polls /healthz and follows a short link. It reports the other account's export latency and
// status, and the latency of /healthz and of the redirect during the burst. Then the same account
// fires concurrent ZIP exports of one workspace, and each answer is sorted: a whole archive, 429 before
// any byte, or cut (which must never happen). Figures are from one run on this machine; compare them
// with the quiet figures of the same run, not across machines.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exitWithin, readZip, REPO_ROOT, spawnService } from "@qrplatform/testing";

const BURST = Number(process.env.BENCH_BURST ?? 100);
/** Concurrent workspace archives, and the codes of that workspace. */
const ARCHIVES = Number(process.env.BENCH_ARCHIVES ?? 12);
const ARCHIVE_CODES = Number(process.env.BENCH_ARCHIVE_CODES ?? 100);
/** The burst's sizes: all large, each one different. */
const burstSize = (i: number) => 4096 - (i % 2048);
const OTHER_SIZE = 2048;

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

interface Client {
  key: string;
  codeId: string;
  vanityUrl: string;
}

async function accountWithCode(apiUrl: string, dataDir: string, name: string): Promise<Client> {
  const { id } = JSON.parse(
    await qrctl(dataDir, ["accounts", "create", "--name", name, "--plan", "enterprise", "--json"]),
  ) as { id: string };
  const { key } = JSON.parse(await qrctl(dataDir, ["keys", "create", "--account", id, "--json"])) as { key: string };
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const workspace = (await (
    await fetch(`${apiUrl}/workspaces`, { method: "POST", headers, body: JSON.stringify({ name }) })
  ).json()) as { id: string };
  const code = (await (
    await fetch(`${apiUrl}/workspaces/${workspace.id}/qr-codes`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name, destination_url: "https://example.com/menu" }),
    })
  ).json()) as { id: string; vanity_url: string };
  return { key, codeId: code.id, vanityUrl: code.vanity_url };
}

/** Fills a new workspace of the client's account with `count` codes. */
async function workspaceWithCodes(apiUrl: string, client: Client, count: number): Promise<string> {
  const headers = { authorization: `Bearer ${client.key}`, "content-type": "application/json" };
  const workspace = (await (
    await fetch(`${apiUrl}/workspaces`, { method: "POST", headers, body: JSON.stringify({ name: "Archive" }) })
  ).json()) as { id: string };
  for (let i = 0; i < count; i++) {
    await fetch(`${apiUrl}/workspaces/${workspace.id}/qr-codes`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: `Code ${i}`, destination_url: `https://example.com/${i}` }),
    });
  }
  return workspace.id;
}

/** One archive's fate: whole (every entry readable), refused before any byte, or cut. */
async function archiveOutcome(
  apiUrl: string,
  client: Client,
  workspaceId: string,
  size: number,
  entries: number,
): Promise<string> {
  const response = await fetch(`${apiUrl}/workspaces/${workspaceId}/qr-codes/export?format=png&size=${size}`, {
    headers: { authorization: `Bearer ${client.key}` },
  });
  if (response.status !== 200)
    return `${response.status} ${((await response.json()) as { error: { code: string } }).error.code}`;
  try {
    const read = await readZip(Buffer.from(await response.arrayBuffer()));
    return read.length === entries ? "whole" : `short (${read.length} of ${entries})`;
  } catch {
    return "cut";
  }
}

async function timed(request: () => Promise<Response>): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const response = await request();
  await response.arrayBuffer();
  return { ms: performance.now() - started, status: response.status };
}

const exportOf = (apiUrl: string, client: Client, size: number) => () =>
  fetch(`${apiUrl}/qr-codes/${client.codeId}/export?format=png&size=${size}`, {
    headers: { authorization: `Bearer ${client.key}` },
  });

/** Polls `request` one at a time until `until` resolves, and answers every latency. */
async function poll(
  request: () => Promise<Response>,
  until: Promise<unknown>,
  slowest?: { ms: number; at: number },
): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const latencies: number[] = [];
  const started = performance.now();
  while (!done) {
    const at = performance.now() - started;
    const { ms } = await timed(request);
    if (slowest && ms > slowest.ms) Object.assign(slowest, { ms, at });
    latencies.push(ms);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return latencies;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const ms = (value: number) => `${Math.round(value)} ms`;

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "qrp-bench-burst-"));
  const platform = spawnService("services/embedded/src/main.ts", {
    DATA_DIR: dataDir,
    PORT: "0",
    GRPC_PORT: "0",
    LOG_LEVEL: "warn",
    ...pick(process.env, /^RENDER_/),
  });
  try {
    const deadline = Date.now() + 60_000;
    while (!/REST API\s+(\S+)/.test(platform.output()) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const apiUrl = /REST API\s+(\S+)/.exec(platform.output())?.[1];
    if (!apiUrl) throw new Error(`npm start did not print its API URL:\n${platform.output()}`);
    const healthz = () => fetch(new URL("/healthz", apiUrl));

    const a = await accountWithCode(apiUrl, dataDir, "Burst");
    const b = await accountWithCode(apiUrl, dataDir, "Other");
    const redirect = () => fetch(b.vanityUrl, { redirect: "manual", headers: { "user-agent": "bench" } });
    // Quiet figures first (this also starts the render workers).
    await timed(exportOf(apiUrl, b, 256));
    const quietExport = await timed(exportOf(apiUrl, b, OTHER_SIZE + 1));
    const quietHealthz = await poll(healthz, new Promise((resolve) => setTimeout(resolve, 1000)));

    const started = performance.now();
    const finished: { status: number; at: number }[] = [];
    const burst = Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        timed(exportOf(apiUrl, a, burstSize(i))).then(
          ({ status }) => finished.push({ status, at: performance.now() - started }),
          () => finished.push({ status: 0, at: performance.now() - started }),
        ),
      ),
    );
    const slowestHealthz = { ms: 0, at: 0 };
    const healthzDuring = poll(healthz, burst, slowestHealthz);
    const redirectsDuring = poll(redirect, burst);
    // The other account asks once the burst is queued.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const other = await timed(exportOf(apiUrl, b, OTHER_SIZE));
    const otherFinishedAt = performance.now() - started;
    await burst;
    const burstMs = performance.now() - started;
    const health = await healthzDuring;
    const redirects = await redirectsDuring;

    const statuses = new Map<number, number>();
    for (const { status } of finished) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    const burstDoneBeforeOther = finished.filter((f) => f.at < otherFinishedAt && f.status === 200).length;
    const env =
      Object.entries(pick(process.env, /^RENDER_/))
        .map(([k, v]) => `${k}=${v}`)
        .join(" ") || "defaults";
    console.log(
      `\nExport burst under npm start (${env}): ${BURST} concurrent PNG exports of 2049..4096 px from one account\n`,
    );
    console.log("| | figure |");
    console.log("|---|---:|");
    console.log(`| other account's ${OTHER_SIZE} px export, quiet | ${ms(quietExport.ms)} (${quietExport.status}) |`);
    console.log(`| other account's ${OTHER_SIZE} px export, during the burst | ${ms(other.ms)} (${other.status}) |`);
    console.log(`| burst exports finished (200) before it | ${burstDoneBeforeOther} of ${BURST} |`);
    console.log(
      `| burst answers | ${[...statuses].map(([s, n]) => `${n}x ${s || "failed"}`).join(", ")} in ${ms(burstMs)} |`,
    );
    console.log(
      `| /healthz quiet, p50 / max | ${ms(percentile(quietHealthz, 50))} / ${ms(Math.max(...quietHealthz))} |`,
    );
    console.log(
      `| /healthz during the burst, p50 / p99 / max (${health.length} polls) | ${ms(percentile(health, 50))} / ${ms(percentile(health, 99))} / ${ms(Math.max(...health))} |`,
    );
    console.log(`| slowest /healthz asked at | ${ms(slowestHealthz.at)} after the burst began |`);
    console.log(
      `| redirect during the burst, p50 / p99 / max (${redirects.length} polls) | ${ms(percentile(redirects, 50))} / ${ms(percentile(redirects, 99))} / ${ms(Math.max(...redirects))} |`,
    );

    const workspaceId = await workspaceWithCodes(apiUrl, a, ARCHIVE_CODES);
    const archivesStarted = performance.now();
    const outcomes = await Promise.all(
      Array.from({ length: ARCHIVES }, (_, i) => archiveOutcome(apiUrl, a, workspaceId, 512 - i, ARCHIVE_CODES)),
    );
    const tally = new Map<string, number>();
    for (const outcome of outcomes) tally.set(outcome, (tally.get(outcome) ?? 0) + 1);
    console.log(
      `\n${ARCHIVES} concurrent ZIP exports of one workspace of ${ARCHIVE_CODES} codes (512 px PNG), one account\n`,
    );
    console.log("| | figure |");
    console.log("|---|---:|");
    console.log(
      `| answers | ${[...tally].map(([outcome, n]) => `${n}x ${outcome}`).join(", ")} in ${ms(performance.now() - archivesStarted)} |`,
    );
    console.log(`| cut part way | ${tally.get("cut") ?? 0} |`);
  } finally {
    platform.child.kill("SIGTERM");
    await exitWithin(platform, 30_000).catch(() => platform.child.kill("SIGKILL"));
    await rm(dataDir, { recursive: true, force: true });
  }
}

function pick(env: NodeJS.ProcessEnv, pattern: RegExp): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => pattern.test(e[0]) && e[1] !== undefined),
  );
}

await main();
