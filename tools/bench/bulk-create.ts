// Bulk-create benchmark: `npm start` as a child process (PGlite), one Enterprise account. The ceiling
// is single creates (`POST /workspaces/{id}/qr-codes`, one code a request, BENCH_CONNECTIONS in flight);
// against it, bulk creates of 100 codes a call, one call at a time. It reports codes per second and the
// platform's CPU time per code (from /proc, steadier than throughput on a shared machine), in rounds
// alternating the two, keeping each one's best round. Figures are ratios within one run.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exitWithin, REPO_ROOT, spawnService } from "@qrplatform/testing";

const CODES = Number(process.env.BENCH_CODES ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);
const BATCH = 100;

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

/** A process's CPU time so far (user and system), in microseconds, from /proc (Linux). */
function cpuMicrosOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
}

interface Round {
  codesPerSecond: number;
  cpuMicrosPerCode: number;
}

async function measure(pid: number, create: () => Promise<number>): Promise<Round> {
  const cpuBefore = cpuMicrosOf(pid);
  const started = performance.now();
  const created = await create();
  const seconds = (performance.now() - started) / 1000;
  if (created !== CODES) throw new Error(`created ${created} codes, not ${CODES}`);
  return { codesPerSecond: created / seconds, cpuMicrosPerCode: (cpuMicrosOf(pid) - cpuBefore) / created };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "qrp-bench-bulk-"));
  const platform = spawnService("services/embedded/src/main.ts", {
    DATA_DIR: dataDir,
    PORT: "0",
    GRPC_PORT: "0",
    LOG_LEVEL: "warn",
  });
  try {
    const deadline = Date.now() + 60_000;
    while (!/REST API\s+(\S+)/.test(platform.output()) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const apiUrl = /REST API\s+(\S+)/.exec(platform.output())?.[1];
    if (!apiUrl) throw new Error(`npm start did not print its API URL:\n${platform.output()}`);
    const { id } = JSON.parse(
      await qrctl(dataDir, ["accounts", "create", "--name", "Bulk bench", "--plan", "enterprise", "--json"]),
    ) as { id: string };
    const { key } = JSON.parse(await qrctl(dataDir, ["keys", "create", "--account", id, "--json"])) as { key: string };
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${apiUrl}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const item = (i: number) => ({
      name: `Table ${i}`,
      destination_url: `https://example.com/menu/${i}`,
      tags: ["bench"],
    });

    let round = 0;
    /** Each round creates its codes in a workspace of its own. */
    const workspace = async () => (await post("/workspaces", { name: `Round ${++round}` })).body.id as string;
    const single = async () => {
      const workspaceId = await workspace();
      let next = 0;
      let created = 0;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (next < CODES) {
            const i = next++;
            if ((await post(`/workspaces/${workspaceId}/qr-codes`, item(i))).status === 201) created++;
          }
        }),
      );
      return created;
    };
    const bulk = async () => {
      const workspaceId = await workspace();
      let created = 0;
      for (let from = 0; from < CODES; from += BATCH) {
        const items = Array.from({ length: Math.min(BATCH, CODES - from) }, (_, i) => item(from + i));
        created += (await post(`/workspaces/${workspaceId}/qr-codes/bulk`, { items })).body.created as number;
      }
      return created;
    };

    // Warm-up: the first requests compile and fill caches.
    await measure(platform.child.pid!, async () => {
      await single();
      return CODES;
    });
    const best = { single: undefined as Round | undefined, bulk: undefined as Round | undefined };
    for (let i = 0; i < ROUNDS; i++) {
      for (const [name, create] of [
        ["single", single],
        ["bulk", bulk],
      ] as const) {
        const result = await measure(platform.child.pid!, create);
        if (!best[name] || result.codesPerSecond > best[name].codesPerSecond) best[name] = result;
      }
    }
    const ceiling = best.single!;
    console.log(`Bulk create: ${CODES} codes a round, ${ROUNDS} rounds each, best round kept (PGlite, npm start)`);
    console.log("| | codes/s | CPU per code |");
    console.log("|---|---:|---:|");
    const row = (label: string, r: Round) =>
      console.log(
        `| ${label} | ${(r.codesPerSecond / ceiling.codesPerSecond).toFixed(2)} (${Math.round(r.codesPerSecond)}/s) | ` +
          `${Math.round(r.cpuMicrosPerCode)} µs (${(r.cpuMicrosPerCode / ceiling.cpuMicrosPerCode).toFixed(2)}) |`,
      );
    row(`ceiling: single creates, ${CONNECTIONS} in flight`, ceiling);
    row(`bulk creates, ${BATCH} a call, one call at a time`, best.bulk!);
  } finally {
    platform.child.kill("SIGTERM");
    await exitWithin(platform, 30_000).catch(() => platform.child.kill("SIGKILL"));
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
