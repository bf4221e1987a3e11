// Redirect benchmark: the short-link path under load, side by side with a bare node:http server
// answering 302 from a Map (the ceiling); how fast scans reach Postgres; and analytics latency at
// 10 million scans. Every server runs in its own process (redirect-servers.ts), loaded by wrk.
// Figures are from one run on this machine; compare the ratios, not the numbers.
//
// DATABASE_URL names the Postgres server (default: local, user postgres). The redirect part uses a
// fresh database, qrp_bench_redirects; the analytics part keeps its 10M-row dataset in
// qrp_bench_scans and reuses it on later runs (generating it takes a few minutes). BENCH_ONLY picks
// parts (comma-separated: redirects, rules, ingestion, embedded, analytics, storage); all by default. BENCH_DB_PREFIX
// (default qrp_bench) names its databases (and the storage part's scratch one), so runs beside each other on one server do not share
// them. The last table sets every figure the platform promises beside its target.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync, readFileSync } from "node:fs";
import http from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createClient } from "@connectrpc/connect";
import { sql, type Kysely } from "kysely";
import pg from "pg";
import { AnalyticsService, LinkService } from "@qrplatform/api/links";
import { openDatabase, type Database } from "@qrplatform/db";
import { adminQuery as runOnServer } from "@qrplatform/db/testing";
import { createLogger, inProcessTransport } from "@qrplatform/platform";
import { ruleInitOf } from "@qrplatform/routing";
import { buildLinks } from "../../services/links/src/server.js";
import { firstKeyAt } from "../../services/links/src/scans/analytics/scan-keys.js";
import { hourlyScans } from "../../services/links/src/scans/analytics/scans.repository.js";
import type { LinksTables } from "../../services/links/src/tables.js";
import { buildAll } from "../build/build.js";
import { failingRules, RULE_COUNTRIES, RULES_ACCEPT_LANGUAGE } from "./failing-rules.js";
import { scanStorageBudget } from "./scan-storage.js";
import { wrk, type WrkRequest } from "./wrk.js";
import { credentials, PAGE_TOKEN_SECRET } from "@qrplatform/testing";

const SERVER_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARM_UP_SECONDS = 2;
const CONNECTIONS = 50;
/** `npm start` is loaded as a busy event's short links would be: 64 connections. */
const EMBEDDED_CONNECTIONS = 64;
const PARTS = new Set((process.env.BENCH_ONLY ?? "redirects,rules,ingestion,embedded,analytics,storage").split(","));
const LINKS = 1000;
const SHORT_BASE = "https://s.qr.example";
const SHORT_HOST = "s.qr.example";
const DB_PREFIX = process.env.BENCH_DB_PREFIX ?? "qrp_bench";
if (!/^[a-z_][a-z0-9_]*$/.test(DB_PREFIX))
  throw new Error(`BENCH_DB_PREFIX must be a lower-case SQL name, not "${DB_PREFIX}"`);
const REDIRECTS_DB = `${DB_PREFIX}_redirects`;
const SCANS_DB = `${DB_PREFIX}_scans`;
/** The analytics dataset's scans (BENCH_ANALYTICS_SCANS: fewer for a quick check of the part; the targets are for 10 million). */
const SCAN_ROWS = Number(process.env.BENCH_ANALYTICS_SCANS ?? 10_000_000);
const HOT_LINK_SCANS = SCAN_ROWS / 5;
const DAYS = 400;
// Bump when the generated data changes shape, so an old dataset is regenerated rather than reused.
const DATASET_VERSION = 8;
const ANALYTICS_RUNS = 20;

const logger = createLogger({ service: "bench", level: "warn" });

// What phones send when a camera app opens a link: no bots, so every redirect is a scan.
const USER_AGENTS = [
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (Linux; Android 15; Pixel 9) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Mobile Safari/537.36",
  "Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/27.0 Chrome/125.0.0.0 Mobile Safari/537.36",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/138.0.7204.119 Mobile/15E148 Safari/604.1",
];

const databaseUrl = (name: string) => {
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

const adminQuery = (text: string) => runOnServer(SERVER_URL, text);

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

// ---------------------------------------------------------------------------------------------
// 1. Redirect throughput

type Mode = "ceiling" | "recording" | "cached" | "embedded" | "ingest";

/** What a server process reports on each status request (see redirect-servers.ts). */
interface ServerStatus {
  /** CPU time so far, user and system: of the whole process, and of the thread that answers requests. */
  cpuMs: number;
  requestThreadCpuMs: number;
  pendingScans: number;
  recordedScans: number;
  oldestUnstoredMs: number;
  /** The longest event-loop stall since the previous status. */
  maxStallMs: number;
}

interface RunningServer {
  port: number;
  /** Links the server made itself (embedded). */
  slugs: [string, string][] | undefined;
  status(): Promise<ServerStatus>;
  /** The next line the process prints (an ingest run's result). */
  nextLine(): Promise<string>;
  signal(name: NodeJS.Signals): void;
  stop(): Promise<void>;
}

let compiled: Promise<string> | undefined;
/**
 * redirect-servers.ts and the platform's threads compiled as `npm run build` compiles what ships
 * (tsx's output wraps every function made at run time in a naming helper, which the hot path would
 * pay for per request); once per run, under node_modules so the compiled files find their packages.
 */
function compiledServers(): Promise<string> {
  compiled ??= (async () => {
    const outdir = "node_modules/.cache/qrp-bench-servers";
    await buildAll(outdir, { "redirect-servers": "tools/bench/redirect-servers.ts" });
    return join(import.meta.dirname, "../..", outdir, "redirect-servers.js");
  })();
  return compiled;
}

/**
 * Starts redirect-servers.ts (compiled) in its own process and waits for its port. BENCH_CPU_PROF=<dir> profiles
 * it; BENCH_NODE_FLAGS adds flags to its node (such as --trace-gc, whose lines go to BENCH_GC_LOG or
 * are dropped: only JSON lines are the server's answers).
 */
async function startServer(mode: Mode, slugsFile: string, env: Record<string, string> = {}): Promise<RunningServer> {
  const profileDir = process.env.BENCH_CPU_PROF;
  // A folder per mode: node names each thread's profile by its process and thread ids.
  const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${join(profileDir, mode)}`] : [];
  const flags = (process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter(Boolean);
  const child: ChildProcess = spawn(
    process.execPath,
    [...profile, ...flags, await compiledServers(), mode, slugsFile],
    {
      env: { ...process.env, DATABASE_URL: databaseUrl(REDIRECTS_DB), SHORT_LINK_BASE_URL: SHORT_BASE, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  // The server answers each question with one JSON line, in order.
  const waiting: ((line: string) => void)[] = [];
  const gcLog = process.env.BENCH_GC_LOG;
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (line.startsWith("{")) waiting.shift()?.(line);
    else if (gcLog) appendFileSync(gcLog, `${mode}: ${line}\n`);
  });
  const nextLine = () =>
    Promise.race([
      new Promise<string>((resolve) => waiting.push(resolve)),
      exited.then((code) => Promise.reject(new Error(`the ${mode} server exited (${code})`))),
    ]);
  const { port, slugs } = JSON.parse(await nextLine()) as { port: number; slugs?: [string, string][] };
  return {
    port,
    slugs,
    nextLine,
    signal: (name) => child.kill(name),
    async status() {
      const line = nextLine();
      child.kill("SIGUSR2");
      return JSON.parse(await line) as ServerStatus;
    },
    async stop() {
      child.kill("SIGTERM");
      const code = await exited;
      if (code !== 0) throw new Error(`the ${mode} server exited with ${code}`);
    },
  };
}

interface LoadResult {
  perSecond: number;
  p50: number;
  p99: number;
  redirects: number;
  seconds: number;
  /** The server process's CPU time per request, in microseconds, and the part of it the thread that answers spent. */
  cpuMicros: number;
  requestThreadCpuMicros: number;
  /** CPU per request of the Postgres backends the server holds, and of wrk. */
  postgresCpuMicros: number;
  wrkCpuMicros: number;
  /** The longest the server's event loop could not turn in any of the turns (sampled every 100 ms). */
  maxStallMs: number;
}

/** CPU time (ms) of this process's children that have ended: wrk's runs, as each is waited for. */
function endedChildrenCpuMs(): number {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
  // cutime and cstime, in clock ticks (100 a second on Linux).
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/**
 * Loads the server with `connections` connections (wrk) for `seconds`, each cycling through `requests`:
 * each connection sends its next request as soon as its answer arrives, or, given a pause, that long
 * after it on average.
 */
async function load(
  port: number,
  requests: WrkRequest[],
  seconds: number,
  connections = CONNECTIONS,
  meanPauseMs?: number,
): Promise<LoadResult> {
  const result = await wrk({ port, requests, seconds, connections, meanPauseMs });
  if (result.badStatus > 0 || result.socketErrors > 0) {
    throw new Error(
      `port ${port}: ${result.requests} answers, ${result.badStatus} not 2xx or 3xx, ${result.socketErrors} socket errors or timeouts`,
    );
  }
  return {
    perSecond: result.requests / result.seconds,
    p50: result.p50Ms,
    p99: result.p99Ms,
    redirects: result.requests,
    seconds: result.seconds,
    cpuMicros: 0,
    requestThreadCpuMicros: 0,
    postgresCpuMicros: 0,
    wrkCpuMicros: 0,
    maxStallMs: 0,
  };
}

/**
 * One request per link, with a phone's User-Agent, each time from a visitor not seen before (a new
 * public address in X-Forwarded-For, as a load balancer forwards it). Most scans of a busy code are a
 * visitor's first of the day (as are 98 in 100 of the analytics dataset's hot code), and that
 * is the scan that costs storage most, a new visitor-day, and misses the address caches.
 */
function scanRequests(slugs: string[], headers: Record<string, string> = {}): WrkRequest[] {
  return slugs.map(
    (slug, i): WrkRequest => ({
      path: `/${slug}`,
      headers: {
        ...headers,
        host: SHORT_HOST,
        "user-agent": USER_AGENTS[i % USER_AGENTS.length]!,
        ...(i % 10 === 0 ? { referer: "https://l.instagram.com/" } : {}),
      },
      addressHeader: "x-forwarded-for",
    }),
  );
}

async function countScans(db: Kysely<unknown>): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from links.raw_scans`.execute(db);
  return rows[0]!.n;
}

/**
 * The fixed rate at which the ceiling and the redirectors are also loaded (BENCH_PACED_RATE, default
 * 4,000 redirects/s): below what any of them answers here, so their latencies compare the work of a
 * request rather than the length of the queue (with connections that each wait for their answer, a
 * server answering at half the rate has twice the mean latency, by Little's law).
 */
const PACED_RATE = Number(process.env.BENCH_PACED_RATE ?? 4000);
const PACED_SECONDS = 5;
/**
 * The servers take turns in rounds, forwards then backwards, each figure summed over its rounds: the
 * machine is shared and its speed drifts by tens of percent within a minute, and turns make the drift
 * fall on every server alike.
 */
const REDIRECT_ROUNDS = 5;
const REDIRECT_MODES = ["ceiling", "cached", "recording"] as const;
type RedirectMode = (typeof REDIRECT_MODES)[number];

interface RedirectFigures {
  rows: { scenario: string; result: LoadResult }[];
  /** Each server again at one rate (PACED_RATE). */
  paced: { rate: number; ceiling: LoadResult; recording: LoadResult; cached: LoadResult };
  /** Redirects wrk counted while recording; it does not count those in flight when a run stops. */
  answered: number;
  /** Scans the recording server took, as it counted them: each must be stored once. */
  recorded: number;
  /** The longest the recorder's buffer took to empty after one of its turns. */
  drainMs: number;
  stored: number;
  /** The oldest unstored scan's age, sampled every 100 ms during the load: the largest seen. */
  maxOldestUnstoredMs: number;
}

/** Runs `during` every `everyMs` until `work` settles; answers work's result. */
async function sampling<T>(work: Promise<T>, everyMs: number, during: () => Promise<void>): Promise<T> {
  let done = false;
  const sampler = (async () => {
    while (!done) {
      await new Promise((resolve) => setTimeout(resolve, everyMs));
      if (!done) await during();
    }
  })();
  try {
    return await work;
  } finally {
    done = true;
    await sampler;
  }
}

/** What the recording server's turns report: its status every 100 ms of load, and how long its buffer took to empty after. */
interface RecordingWatch {
  sampled(status: ServerStatus): void;
  drained(ms: number): void;
}

/**
 * Waits until the server holds no unstored scan, then a little longer for the fold that follows, so
 * the next server's turn does not pay for this one's scans. Answers the status when the buffer emptied.
 */
async function settled(server: RunningServer, watch?: RecordingWatch): Promise<ServerStatus> {
  const started = performance.now();
  let status = await server.status();
  while (status.pendingScans > 0) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    status = await server.status();
  }
  watch?.drained(performance.now() - started);
  await new Promise((resolve) => setTimeout(resolve, 300));
  return status;
}

/**
 * Every server in REDIRECT_ROUNDS turns of `seconds / REDIRECT_ROUNDS`, unpaced or with each server's
 * own pause (`pauses`), the recording server's backlog stored before the next turn. Each figure sums
 * its turns: requests over seconds, CPU over requests; p50 and p99 are the turns' own, weighted by
 * their requests.
 */
async function rounds(
  db: Kysely<unknown>,
  servers: Map<RedirectMode, RunningServer>,
  requests: WrkRequest[],
  seconds: number,
  pauses: Map<RedirectMode, number> | undefined,
  watch: RecordingWatch,
): Promise<Map<RedirectMode, LoadResult>> {
  const sums = new Map(
    REDIRECT_MODES.map((mode) => [
      mode,
      {
        redirects: 0,
        seconds: 0,
        p50: 0,
        p99: 0,
        cpuMs: 0,
        requestThreadCpuMs: 0,
        postgresCpuMs: 0,
        wrkCpuMs: 0,
        maxStallMs: 0,
      },
    ]),
  );
  for (let round = 0; round < REDIRECT_ROUNDS; round++) {
    for (const mode of round % 2 === 0 ? REDIRECT_MODES : [...REDIRECT_MODES].reverse()) {
      const server = servers.get(mode)!;
      const before = await server.status();
      const postgresBefore = await backendCpu(db, REDIRECTS_DB);
      const wrkBefore = endedChildrenCpuMs();
      const sum = sums.get(mode)!;
      // Every server is sampled alike; the samples' own CPU is the server's too, and small: one JSON line per 100 ms.
      const result = await sampling(
        load(server.port, requests, seconds / REDIRECT_ROUNDS, CONNECTIONS, pauses?.get(mode)),
        100,
        async () => {
          const status = await server.status();
          sum.maxStallMs = Math.max(sum.maxStallMs, status.maxStallMs);
          if (mode === "recording") watch.sampled(status);
        },
      );
      const after = mode === "recording" ? await settled(server, watch) : await server.status();
      sum.maxStallMs = Math.max(sum.maxStallMs, after.maxStallMs);
      const postgresAfter = await backendCpu(db, REDIRECTS_DB);
      sum.wrkCpuMs += endedChildrenCpuMs() - wrkBefore;
      for (const [pid, ms] of postgresAfter) sum.postgresCpuMs += ms - (postgresBefore.get(pid) ?? 0);
      sum.redirects += result.redirects;
      sum.seconds += result.seconds;
      sum.p50 += result.p50 * result.redirects;
      sum.p99 += result.p99 * result.redirects;
      sum.cpuMs += after.cpuMs - before.cpuMs;
      sum.requestThreadCpuMs += after.requestThreadCpuMs - before.requestThreadCpuMs;
    }
  }
  return new Map(
    [...sums].map(([mode, sum]) => [
      mode,
      {
        perSecond: sum.redirects / sum.seconds,
        p50: sum.p50 / sum.redirects,
        p99: sum.p99 / sum.redirects,
        redirects: sum.redirects,
        seconds: sum.seconds,
        cpuMicros: (sum.cpuMs * 1000) / sum.redirects,
        requestThreadCpuMicros: (sum.requestThreadCpuMs * 1000) / sum.redirects,
        postgresCpuMicros: (sum.postgresCpuMs * 1000) / sum.redirects,
        wrkCpuMicros: (sum.wrkCpuMs * 1000) / sum.redirects,
        maxStallMs: sum.maxStallMs,
      },
    ]),
  );
}

/**
 * Each server's pause after an answer that brings its connections, together, to `rate`: a connection
 * sends once per latency plus pause, so the pause is what the rate leaves after the latency the server
 * showed at a first guess (wrk's pauses are whole milliseconds, drawn to keep their mean).
 */
async function pausesFor(
  servers: Map<RedirectMode, RunningServer>,
  requests: WrkRequest[],
  rate: number,
): Promise<{ pauses: Map<RedirectMode, number>; recordingTrialRedirects: number }> {
  const interval = (CONNECTIONS * 1000) / rate;
  const pauses = new Map<RedirectMode, number>();
  let recordingTrialRedirects = 0;
  for (const mode of REDIRECT_MODES) {
    const server = servers.get(mode)!;
    const trial = await load(server.port, requests, 1, CONNECTIONS, interval);
    const latency = (CONNECTIONS * 1000) / trial.perSecond - interval;
    pauses.set(mode, Math.max(0, interval - latency));
    if (mode === "recording") {
      recordingTrialRedirects = trial.redirects;
      await settled(server);
    }
  }
  return { pauses, recordingTrialRedirects };
}

async function redirectThroughput(database: Database, slugs: Map<string, string>): Promise<RedirectFigures> {
  const dir = await mkdtemp(join(tmpdir(), "qrp-bench-"));
  const slugsFile = join(dir, "slugs.json");
  await writeFile(slugsFile, JSON.stringify([...slugs]));
  const requests = scanRequests([...slugs.keys()]);
  const figures = { answered: 0, recorded: 0, drainMs: 0, stored: 0, maxOldestUnstoredMs: 0 };
  const recording: RecordingWatch = {
    sampled: (status) => (figures.maxOldestUnstoredMs = Math.max(figures.maxOldestUnstoredMs, status.oldestUnstoredMs)),
    drained: (ms) => (figures.drainMs = Math.max(figures.drainMs, ms)),
  };
  const servers = new Map<RedirectMode, RunningServer>();
  try {
    for (const mode of REDIRECT_MODES) servers.set(mode, await startServer(mode, slugsFile));
    for (const mode of REDIRECT_MODES) {
      const warmUp = await load(servers.get(mode)!.port, requests, WARM_UP_SECONDS);
      if (mode === "recording") figures.answered += warmUp.redirects;
    }
    await settled(servers.get("recording")!);
    const full = await rounds(database.db, servers, requests, SECONDS, undefined, recording);
    const rate = PACED_RATE;
    const { pauses, recordingTrialRedirects } = await pausesFor(servers, requests, rate);
    const paced = await rounds(database.db, servers, requests, PACED_SECONDS, pauses, recording);
    figures.answered += full.get("recording")!.redirects + recordingTrialRedirects + paced.get("recording")!.redirects;
    // Every turn ended with the recorder's buffer empty (settled): what the table holds now is all it recorded.
    figures.recorded = (await servers.get("recording")!.status()).recordedScans;
    figures.stored = await countScans(database.db);
    return {
      rows: [
        { scenario: "ceiling: bare node:http, 302 from a Map", result: full.get("ceiling")! },
        { scenario: "redirector, cached, recording scans", result: full.get("recording")! },
        { scenario: "redirector, cached, no recording", result: full.get("cached")! },
      ],
      paced: { rate, ceiling: paced.get("ceiling")!, recording: paced.get("recording")!, cached: paced.get("cached")! },
      ...figures,
    };
  } finally {
    await Promise.all([...servers.values()].map((server) => server.stop()));
    await rm(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// 1b. What routing rules cost per redirect

/** Rules a code of the rules part carries, and how many such codes are loaded (BENCH_RULE_LINKS). */
const RULES = 20;
const RULE_LINKS = Number(process.env.BENCH_RULE_LINKS ?? 200);
/** The bound on what 20 rules may add to a redirect's CPU. */
const RULES_TARGET_MICROS = 5;
/**
 * The header the rules part's visitors name their country in, as a trusted proxy's COUNTRY_HEADER: one
 * of the rules' countries, so that each rule is read to its schedule whatever the address.
 */
const COUNTRY_HEADER = "x-visitor-country";

/**
 * The three turns of the rules part: a recording redirector that serves only codes without rules, as
 * every redirector did before routing (today); and a second one that serves codes with rules beside
 * codes without, measured on each (its routing code warm, its country database open).
 */
const RULES_TURNS = ["today", "mixedPlain", "mixedRules"] as const;
type RulesTurn = (typeof RULES_TURNS)[number];

interface RulesRun {
  redirects: number;
  /** The server process's CPU per redirect (every thread), and its answering thread's, in microseconds. */
  cpuMicros: number;
  requestThreadCpuMicros: number;
  /** CPU per redirect of each turn, in microseconds: how far the turns of one server spread is the run's noise. */
  turns: number[];
}
type RulesFigures = Record<RulesTurn, RulesRun>;

/** Where one GET of a short link goes, as a phone would send it. */
function locationOf(port: number, slug: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    http
      .get(
        {
          host: "127.0.0.1",
          port,
          path: `/${slug}`,
          headers: {
            host: SHORT_HOST,
            "user-agent": USER_AGENTS[0]!,
            "accept-language": RULES_ACCEPT_LANGUAGE,
            "x-forwarded-for": "81.2.69.142",
            [COUNTRY_HEADER]: RULE_COUNTRIES[0]!,
          },
        },
        (res) => {
          res.resume();
          resolve(res.headers.location);
        },
      )
      .on("error", reject);
  });
}

/**
 * The recording redirector over codes with RULES rules (none holding: the code's destination applies)
 * and over codes without, in REDIRECT_ROUNDS turns that alternate forwards and backwards, each turn's
 * scans stored before the next so its CPU is the turn's own. Every request names a language the rules
 * read; plain and routed codes are loaded alike, RULE_LINKS of each.
 */
async function rulesCost(plain: Map<string, string>, routed: Map<string, string>): Promise<RulesFigures> {
  const requests = (slugs: string[]) =>
    scanRequests(slugs, { "accept-language": RULES_ACCEPT_LANGUAGE }).map((request, i) => ({
      ...request,
      headers: { ...request.headers, [COUNTRY_HEADER]: RULE_COUNTRIES[i % RULE_COUNTRIES.length]! },
    }));
  const plainRequests = requests([...plain.keys()]);
  const routedRequests = requests([...routed.keys()]);
  const env = { BENCH_COUNTRY_HEADER: COUNTRY_HEADER };
  const servers: RunningServer[] = [];
  try {
    const today = await startServer("recording", "", env);
    servers.push(today);
    const mixed = await startServer("recording", "", env);
    servers.push(mixed);
    // A code with rules must answer as a code without would: its own destination, no rule holding.
    const [slug, destination] = [...routed][0]!;
    const location = await locationOf(mixed.port, slug);
    if (location !== destination)
      throw new Error(`a code with ${RULES} failing rules went to ${location}, not its destination ${destination}`);
    const turns: Record<RulesTurn, [RunningServer, WrkRequest[]]> = {
      today: [today, plainRequests],
      mixedPlain: [mixed, plainRequests],
      mixedRules: [mixed, routedRequests],
    };
    for (const turn of RULES_TURNS) {
      const [server, requests] = turns[turn];
      await load(server.port, requests, WARM_UP_SECONDS);
      await settled(server);
    }
    const sums = new Map(
      RULES_TURNS.map((turn) => [turn, { redirects: 0, cpuMs: 0, threadMs: 0, turns: [] as number[] }]),
    );
    for (let round = 0; round < REDIRECT_ROUNDS; round++) {
      for (const turn of round % 2 === 0 ? RULES_TURNS : [...RULES_TURNS].reverse()) {
        const [server, requests] = turns[turn];
        const before = await server.status();
        const result = await load(server.port, requests, SECONDS / REDIRECT_ROUNDS);
        // The turn's scans stored before the next turn: storing them is part of what a redirect costs.
        const after = await settled(server);
        const sum = sums.get(turn)!;
        const cpuMs = after.cpuMs - before.cpuMs;
        sum.redirects += result.redirects;
        sum.cpuMs += cpuMs;
        sum.threadMs += after.requestThreadCpuMs - before.requestThreadCpuMs;
        sum.turns.push((cpuMs * 1000) / result.redirects);
      }
    }
    const figure = (turn: RulesTurn): RulesRun => {
      const { redirects, cpuMs, threadMs, turns: perTurn } = sums.get(turn)!;
      return {
        redirects,
        cpuMicros: (cpuMs * 1000) / redirects,
        requestThreadCpuMicros: (threadMs * 1000) / redirects,
        turns: perTurn,
      };
    };
    return { today: figure("today"), mixedPlain: figure("mixedPlain"), mixedRules: figure("mixedRules") };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/** Prints the rules part and adds its two targets. */
function reportRules(figures: RulesFigures): void {
  const { today, mixedPlain, mixedRules } = figures;
  console.log(
    `\nRouting rules on the redirect path: the recording redirector, ${CONNECTIONS} connections, ${SECONDS} s each after ${WARM_UP_SECONDS} s of warm-up, ` +
      `in ${REDIRECT_ROUNDS} turns that alternate; ${RULE_LINKS} codes of each kind, phone User-Agents with an Accept-Language and a country header (one of the rules' countries), each request from a new visitor. ` +
      `The codes with rules carry ${RULES} rules that each read every condition and hold for none, so the code's destination applies\n`,
  );
  console.log("| server, codes | redirects | server CPU per redirect | of it, the request thread | turns (µs) |");
  console.log("|---|---:|---:|---:|---|");
  const rows: [string, RulesRun][] = [
    ["a redirector serving only codes without rules (as before routing)", today],
    ["a redirector serving both, codes without rules", mixedPlain],
    [`the same, codes with ${RULES} rules`, mixedRules],
  ];
  for (const [name, run] of rows)
    console.log(
      `| ${name} | ${run.redirects} | ${run.cpuMicros.toFixed(1)} µs | ${run.requestThreadCpuMicros.toFixed(1)} µs | ` +
        `${run.turns.map((micros) => micros.toFixed(1)).join(", ")} |`,
    );
  // The noise: half the spread of one server's turns on the same codes, the larger of the two servers'.
  const halfSpread = (run: RulesRun) => (Math.max(...run.turns) - Math.min(...run.turns)) / 2;
  const noise = Math.max(halfSpread(today), halfSpread(mixedPlain));
  const plainCost = mixedPlain.cpuMicros - today.cpuMicros;
  const rulesCost = mixedRules.cpuMicros - mixedPlain.cpuMicros;
  console.log(
    `\nA code without rules: ${mixedPlain.cpuMicros.toFixed(1)} µs beside ${today.cpuMicros.toFixed(1)} µs on a redirector without any ` +
      `(${plainCost >= 0 ? "+" : ""}${plainCost.toFixed(1)} µs; the turns spread ±${noise.toFixed(1)} µs). ` +
      `A code with ${RULES} rules: ${rulesCost >= 0 ? "+" : ""}${rulesCost.toFixed(1)} µs over a code without, in the same process.`,
  );
  targets.push(
    {
      figure: "rules: CPU per redirect of a code without rules, vs a redirector that serves no rules",
      value: `${plainCost >= 0 ? "+" : ""}${plainCost.toFixed(1)} µs (${mixedPlain.cpuMicros.toFixed(1)} / ${today.cpuMicros.toFixed(1)} µs; noise ±${noise.toFixed(1)})`,
      target: "within noise",
      met: Math.abs(plainCost) <= noise,
    },
    {
      figure: `rules: CPU per redirect of a code with ${RULES} rules, over a code without`,
      value: `${rulesCost >= 0 ? "+" : ""}${rulesCost.toFixed(1)} µs (${mixedRules.cpuMicros.toFixed(1)} / ${mixedPlain.cpuMicros.toFixed(1)} µs)`,
      target: `≤ ${RULES_TARGET_MICROS} µs`,
      met: rulesCost <= RULES_TARGET_MICROS,
    },
  );
}

// ---------------------------------------------------------------------------------------------
// 2. Scan ingestion: RecordScans into Postgres from links instances of their own

/** One way of writing: `instances` links processes at once, each sending `parallel` batches at a time. */
interface Writers {
  instances: number;
  parallel: number;
}

const WRITERS = {
  one: { instances: 1, parallel: 1 },
  fourParallel: { instances: 1, parallel: 4 },
  twoInstances: { instances: 2, parallel: 1 },
  sustained: { instances: 2, parallel: 2 },
} satisfies Record<string, Writers>;
type IngestionFigures = Record<keyof typeof WRITERS, IngestionRun>;

/** Rounds of each way of writing after a warm-up round; they alternate, forwards then backwards. */
const INGESTION_ROUNDS = 2;

interface IngestionRun {
  perSecond: number;
  /** CPU per stored scan of the links processes, and of their Postgres backends when the server is local (/proc). */
  linksMicros: number;
  postgresMicros: number | undefined;
}

/** CPU time (user and system, ms) of the server's backends connected to `database`, by pid; those /proc cannot read are left out. */
async function backendCpu(db: Kysely<unknown>, database: string): Promise<Map<number, number>> {
  const { rows } = await sql<{
    pid: number;
  }>`select pid from pg_stat_activity where datname = ${database} and pid <> pg_backend_pid()`.execute(db);
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      cpu.set(pid, (Number(fields[11]) + Number(fields[12])) * (1000 / 100));
    } catch {
      // Another machine's server, or a backend that just ended.
    }
  }
  return cpu;
}

/**
 * Runs each way of writing (WRITERS) with links processes of its own, which send batches of 1,000 new
 * scans to their own RecordScans, and answers the scans stored per second by each. The machine is
 * shared and its load drifts, and the tables grow as the runs go: so every way of writing runs
 * once to warm up (not counted), then in INGESTION_ROUNDS rounds of SECONDS / INGESTION_ROUNDS each,
 * in alternating order, and each figure sums its rounds.
 */
async function ingestion(database: Database): Promise<IngestionFigures> {
  const roundSeconds = SECONDS / INGESTION_ROUNDS;
  const names = Object.keys(WRITERS) as (keyof typeof WRITERS)[];
  const servers = new Map<keyof typeof WRITERS, RunningServer[]>();
  try {
    for (const name of names) {
      const { instances, parallel } = WRITERS[name];
      const env = { BENCH_PARALLEL: String(parallel), BENCH_SECONDS: String(roundSeconds) };
      servers.set(name, await Promise.all(Array.from({ length: instances }, () => startServer("ingest", "", env))));
    }
    const totals = new Map(
      names.map((name) => [name, { stored: 0, seconds: 0, linksMs: 0, postgresMs: 0, postgresRead: false }]),
    );
    for (let round = 0; round <= INGESTION_ROUNDS; round++) {
      for (const name of round % 2 === 1 ? names : [...names].reverse()) {
        const run = await ingestionRun(database, name, servers.get(name)!);
        if (round === 0) continue;
        const total = totals.get(name)!;
        total.stored += run.stored;
        total.seconds += run.seconds;
        total.linksMs += run.linksMs;
        total.postgresMs += run.postgresMs ?? 0;
        total.postgresRead ||= run.postgresMs !== undefined;
      }
    }
    const figure = (name: keyof typeof WRITERS): IngestionRun => {
      const { stored, seconds, linksMs, postgresMs, postgresRead } = totals.get(name)!;
      return {
        perSecond: stored / seconds,
        linksMicros: (linksMs * 1000) / stored,
        postgresMicros: postgresRead ? (postgresMs * 1000) / stored : undefined,
      };
    };
    return {
      one: figure("one"),
      fourParallel: figure("fourParallel"),
      twoInstances: figure("twoInstances"),
      sustained: figure("sustained"),
    };
  } finally {
    await Promise.all([...servers.values()].flat().map((server) => server.stop()));
  }
}

/** One run of one way of writing: its processes send at once; what they stored, in how long, at what CPU. */
async function ingestionRun(database: Database, name: string, servers: RunningServer[]) {
  const before = await countScans(database.db);
  const results = servers.map((server) => server.nextLine());
  for (const server of servers) server.signal("SIGUSR1");
  // The backends' CPU, sampled until the senders report.
  const first = await backendCpu(database.db, REDIRECTS_DB);
  const last = new Map(first);
  const figures = await sampling(Promise.all(results), 100, async () => {
    for (const [pid, ms] of await backendCpu(database.db, REDIRECTS_DB)) {
      if (!first.has(pid)) first.set(pid, ms);
      last.set(pid, ms);
    }
  }).then((lines) => lines.map((line) => JSON.parse(line) as { stored: number; seconds: number; cpuMs: number }));
  const stored = figures.reduce((sum, figure) => sum + figure.stored, 0);
  // What the senders were told must be what the database holds: a figure that drifts from it measures nothing.
  const counted = (await countScans(database.db)) - before;
  if (counted !== stored)
    throw new Error(
      `ingestion (${name}): the senders were told ${stored} scans were new, the database holds ${counted}`,
    );
  return {
    stored,
    seconds: Math.max(...figures.map((figure) => figure.seconds)),
    linksMs: figures.reduce((sum, figure) => sum + figure.cpuMs, 0),
    postgresMs: last.size > 0 ? [...last].reduce((sum, [pid, ms]) => sum + ms - first.get(pid)!, 0) : undefined,
  };
}

// ---------------------------------------------------------------------------------------------
// 2b. The embedded default (`npm start`): PGlite in the process that answers

interface EmbeddedRun {
  result: LoadResult;
  /** The longest event-loop stall during the load, and while its scans were stored after it. */
  maxStallMs: number;
  recorded: number;
  /** Scans in the data dir the server left, counted once it stopped. */
  stored: number;
  drainMs: number;
}

interface EmbeddedFigures {
  /** `npm start` as it starts by default, recording on a thread of its own. */
  byDefault: EmbeddedRun;
  /** The same with SCAN_RECORDING_THREAD=false: recording on the answering thread. */
  onAnsweringThread: EmbeddedRun;
  /** The bare node:http server under the same load just after, on the same slugs: what the machine allows. */
  ceiling: LoadResult;
  ceilingStallMs: number;
}

/** `npm start` in a fresh data dir, loaded after a warm-up; waits for every scan to be stored. Also answers the links it made. */
async function embeddedRun(
  dir: string,
  env: Record<string, string>,
): Promise<{ run: EmbeddedRun; slugs: [string, string][] }> {
  const server = await startServer("embedded", dir, env);
  let run: Omit<EmbeddedRun, "stored">;
  try {
    const requests = scanRequests(server.slugs!.map(([slug]) => slug));
    await load(server.port, requests, WARM_UP_SECONDS, EMBEDDED_CONNECTIONS);
    await server.status();
    const result = await load(server.port, requests, SECONDS, EMBEDDED_CONNECTIONS);
    let status = await server.status();
    let maxStallMs = status.maxStallMs;
    const loadEnded = performance.now();
    while (status.pendingScans > 0) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = await server.status();
      maxStallMs = Math.max(maxStallMs, status.maxStallMs);
    }
    run = { result, maxStallMs, recorded: status.recordedScans, drainMs: performance.now() - loadEnded };
  } finally {
    await server.stop();
  }
  // What the process stored, read from its data dir once it has stopped, rather than what it says it stored.
  const database = await openDatabase({ dataDir: join(dir, "pglite") });
  try {
    return { run: { ...run, stored: await countScans(database.db) }, slugs: server.slugs! };
  } finally {
    await database.close();
  }
}

async function embeddedRedirects(): Promise<EmbeddedFigures> {
  const dir = await mkdtemp(join(tmpdir(), "qrp-bench-embedded-"));
  try {
    const { run: byDefault, slugs } = await embeddedRun(join(dir, "default"), {});
    const { run: onAnsweringThread } = await embeddedRun(join(dir, "answering-thread"), {
      SCAN_RECORDING_THREAD: "false",
    });
    // The same load on a bare node:http server, so the figures above can be read against this machine's noise.
    const slugsFile = join(dir, "slugs.json");
    await writeFile(slugsFile, JSON.stringify(slugs));
    const ceilingServer = await startServer("ceiling", slugsFile);
    try {
      const requests = scanRequests(slugs.map(([slug]) => slug));
      await load(ceilingServer.port, requests, WARM_UP_SECONDS, EMBEDDED_CONNECTIONS);
      await ceilingServer.status();
      const ceiling = await load(ceilingServer.port, requests, SECONDS, EMBEDDED_CONNECTIONS);
      return { byDefault, onAnsweringThread, ceiling, ceilingStallMs: (await ceilingServer.status()).maxStallMs };
    } finally {
      await ceilingServer.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Analytics at 10 million scans

interface Dataset {
  account_id: string;
  hot_link: string;
  median_link: string;
  last_day: string;
}

const ACCOUNT_ID = "00000000-0000-4000-8000-0000000000aa";
// Link n (1..LINKS) has a fixed id, so the scans need no join to find it. Link 1 is the hot one.
const linkIdSql = (n: string) => `('00000000-0000-4000-8000-' || lpad(to_hex(${n}), 12, '0'))::uuid`;

/** Runs `statements` in order on one connection of their own; parallel callers get parallel backends. */
async function onConnection(url: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("set work_mem = '256MB'; set maintenance_work_mem = '1GB'; set synchronous_commit = off");
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

// One row per scan and dimension, from a row of public.bench_scans or of the raw scans.
const BY_DIMENSION =
  "lateral (values ('country', country), ('device', device_type), ('os', os), ('browser', browser), ('referrer', referrer_host)) d (dimension, value)";
// The same, spelled as links.scan_values spells a value: after its dimension's code (DIMENSION_CODES).
const BY_DIMENSION_VALUE =
  "lateral (values ('c' || country), ('d' || device_type), ('o' || os), ('b' || browser), ('r' || referrer_host)) d (dimension_value)";

// The rollups' primary keys, as the migrations make them; dropped while the tables are filled.
const ROLLUP_KEYS = {
  scan_totals: "(link_id)",
  scan_link_days: "(link_id, day)",
};
const primaryKey = (table: keyof typeof ROLLUP_KEYS) =>
  `alter table links.${table} add constraint ${table}_pkey primary key ${ROLLUP_KEYS[table]}`;

/**
 * Fills links.links and links.raw_scans with SCAN_ROWS scans over DAYS days, then the rollups, with plain
 * SQL: the scans are drawn once as the service classifies them (public.bench_scans, dropped at the
 * end), then stored as links.raw_scans keeps them (the link's number, a key of the time and 20 random
 * bits, hashes of the visitor key and context) and counted into the rollups. Indexes are dropped while loading and built afterwards (a sort is far cheaper than millions of
 * random B-tree inserts), and the work is split over two connections, one per core.
 */
async function generateDataset(url: string, lastDay: string): Promise<void> {
  const end = `('${lastDay}'::date + 1)::timestamptz`;
  await onConnection(url, [
    `insert into links.links (id, account_id, slug, destination_url, status, created_at, updated_at)
       select ${linkIdSql("n")}, '${ACCOUNT_ID}', 'bench' || n, 'https://example.com/menu/' || n, 'active', created, created
       from generate_series(1, ${LINKS}) n, (select ${end} - interval '${DAYS} days' as created) c`,
    // Link 1 is the viral one; the others fall off as (n - 1)^-0.8, so a few campaigns dominate and
    // the median link has a few thousand scans.
    `create table public.bench_link_counts as
       with weights as (select n, power(n - 1, -0.8) as w from generate_series(2, ${LINKS}) n)
       select n, ${linkIdSql("n")} as link_id, round(${SCAN_ROWS - HOT_LINK_SCANS} * w / sum(w) over ())::int as scans from weights`,
    `insert into public.bench_link_counts select 1, ${linkIdSql("1")}, ${SCAN_ROWS} - sum(scans) from public.bench_link_counts`,
    // Daily partitions over the dataset's days, as the service's partition manager lays them out (the
    // migration's one partition up to the window's end would hold all 400 days, and one link's day
    // would then be read among all of that link's scans).
    `do $$
     declare partition record; day date;
     begin
       for partition in select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
           where i.inhparent = 'links.raw_scans'::regclass loop
         execute format('drop table links.%I', partition.relname);
       end loop;
       for day in select generate_series((${end} - interval '${DAYS} days')::date,
           ((select until from links.scan_window) at time zone 'UTC')::date - 1, interval '1 day')::date loop
         execute format('create table links.%I partition of links.raw_scans for values from (%s) to (%s)',
           'raw_scans_' || to_char(day, 'YYYYMMDD'), (day - date '1970-01-01')::bigint * 86400000 * 1048576,
           (day + 1 - date '1970-01-01')::bigint * 86400000 * 1048576);
       end loop;
     end $$`,
    "drop index links.raw_scans_link_visitor_key",
    ...Object.keys(ROLLUP_KEYS).map((table) => `alter table links.${table} drop constraint ${table}_pkey`),
  ]);
  // Each link's visitors number a sixth of its scans (the hot link: about 300,000), and repeat
  // visitors are skewed towards a few regulars.
  const scans = (half: number) => `
    insert into public.bench_scans (link_id, scanned_at, country, device_type, os, browser, referrer_host, visitor_key)
    select link_id, ${end} - r_time * interval '${DAYS} days',
      (array['US','DE','GB','FR','ES','IT','NL','BR','IN','JP','CA','AU','MX','PL','SE','CH','AT','BE','TR','KR','ID','PH','NG','ZA','AR','CO','PT','IE','DK','NO',''])[1 + floor(power(r_country, 2.5) * 31)::int],
      (array['mobile','mobile','mobile','mobile','mobile','mobile','tablet','desktop','desktop','mobile','tablet','other'])[agent],
      (array['iOS','Android','iOS','Android','iOS','Android','iOS','Windows','macOS','Android','Android',''])[agent],
      (array['Mobile Safari','Chrome','Chrome','Samsung Browser','Instagram','Facebook','Mobile Safari','Chrome','Safari','Firefox','Chrome',''])[agent],
      case when r_referrer < 0.88 then '' else (array['l.instagram.com','t.co','www.google.com','lm.facebook.com','www.linkedin.com','mail.google.com','out.reddit.com'])[least(7, 1 + floor((r_referrer - 0.88) / 0.12 * 7)::int)] end,
      left(md5(n || '/' || floor(power(r_visitor, 2) * greatest(1, scans / 6.67))::int), 22)
    from (
      select c.n, c.link_id, c.scans, random() as r_time, random() as r_country, 1 + floor(power(random(), 1.6) * 12)::int as agent,
        random() as r_referrer, random() as r_visitor
      from public.bench_link_counts c, generate_series(${1 + half}, c.scans, 2)
      offset 0
    ) g`;
  await onConnection(url, [
    `create unlogged table public.bench_scans (link_id uuid, scanned_at timestamptz, country text, device_type text,
       os text, browser text, referrer_host text, visitor_key text)`,
  ]);
  await Promise.all([onConnection(url, [scans(0)]), onConnection(url, [scans(1)])]);
  const day = "(scanned_at at time zone 'UTC')::date";
  const ms = "(extract(epoch from scanned_at) * 1000)::bigint";
  await Promise.all([
    onConnection(url, [
      `insert into links.raw_scans (link, key, visitor, context)
         select link.number, ${ms} * 1048576 + floor(random() * 1048576)::bigint,
           hashtextextended(visitor_key, 0), hashtextextended(row(device_type, os, browser, country, referrer_host)::text, 0)
         from public.bench_scans join links.links as link on link.id = link_id`,
      `insert into links.scan_contexts (code, device_type, os, browser, country, referrer_host)
         select distinct on (1) hashtextextended(row(device_type, os, browser, country, referrer_host)::text, 0),
           device_type, os, browser, country, referrer_host from public.bench_scans`,
      `create table public.bench_visitor_days as
         select link_id, ${day} as day, count(distinct hashtextextended(visitor_key, 0)) as n from public.bench_scans group by 1, 2`,
    ]),
    onConnection(url, [
      `insert into links.scan_totals (link_id, account_id, scans) select link_id, '${ACCOUNT_ID}', count(*) from public.bench_scans group by 1`,
      `insert into links.scan_values (dimension_value) select distinct d.dimension_value from public.bench_scans, ${BY_DIMENSION_VALUE}`,
      // A day's scans are its countries' scans; its visitors are counted once the visitor-days are in.
      `create unlogged table public.bench_day_values as
         select link_id, day, sum(scans) filter (where by_value.dimension_value like 'c%') as scans,
           array_agg(known.code order by known.code) as value_codes, array_agg(scans order by known.code) as value_scans
         from (
           select link_id, ${day} as day, d.dimension_value, count(*) as scans
           from public.bench_scans, ${BY_DIMENSION_VALUE}
           group by 1, 2, 3
         ) as by_value
         join links.scan_values as known using (dimension_value)
         group by 1, 2`,
    ]),
  ]);
  // Packed as the service packs a link-day (links.scan_day_pack, the format's SQL spelling that
  // 20270310T1000_packed_day_rollups made).
  await onConnection(url, [
    `insert into links.scan_link_days (link_id, day, counts)
       select link_id, day, links.scan_day_pack(rollup.scans::bigint, coalesce(visitors.n, 0), rollup.value_codes, rollup.value_scans)
       from public.bench_day_values as rollup
       left join public.bench_visitor_days as visitors using (link_id, day)
       order by link_id, day`,
    "drop table public.bench_day_values",
    "drop table public.bench_visitor_days",
  ]);
  await Promise.all([
    onConnection(url, [
      "create unique index raw_scans_link_visitor_key on links.raw_scans (link, visitor, key)",
      "vacuum analyze links.raw_scans",
      "drop table public.bench_scans",
    ]),
    onConnection(url, [
      primaryKey("scan_totals"),
      primaryKey("scan_link_days"),
      "vacuum analyze links.links",
      "vacuum analyze links.scan_totals",
      "vacuum analyze links.scan_link_days",
      "drop table public.bench_link_counts",
    ]),
  ]);
}

/** The dataset in SCANS_DB: reused when a previous run completed it, generated (in minutes) otherwise. */
async function scansDataset(): Promise<{ dataset: Dataset; database: Database; generatedMs: number | undefined }> {
  const exists = await adminQuery(`select 1 from pg_database where datname = '${SCANS_DB}'`);
  if (exists.rowCount === 0) await adminQuery(`create database ${SCANS_DB}`);
  const url = databaseUrl(SCANS_DB);
  const database = await openDatabase({ databaseUrl: url, dataDir: "" });
  const marker = await sql<Dataset>`
    select account_id, hot_link, median_link, to_char(last_day, 'YYYY-MM-DD') as last_day from public.bench_dataset
    where version = ${DATASET_VERSION} and scan_rows = ${SCAN_ROWS}`
    .execute(database.db)
    .catch(() => ({ rows: [] as Dataset[] }));
  if (marker.rows[0]) return { dataset: marker.rows[0], database, generatedMs: undefined };

  console.log(`\nGenerating ${SCAN_ROWS.toLocaleString("en")} scans in ${SCANS_DB} (first run only; a few minutes)...`);
  const started = performance.now();
  await sql`drop table if exists public.bench_dataset`.execute(database.db);
  await sql`drop table if exists public.bench_link_counts`.execute(database.db);
  await sql`drop schema if exists links cascade`.execute(database.db);
  await buildLinks({ db: database.db, shortLinkBaseUrl: SHORT_BASE, pageTokenSecret: PAGE_TOKEN_SECRET });
  const lastDay = new Date().toISOString().slice(0, 10);
  await generateDataset(url, lastDay);
  const generatedMs = performance.now() - started;
  await sql`
    create table public.bench_dataset as
    select ${DATASET_VERSION}::int as version, ${SCAN_ROWS}::bigint as scan_rows, ${lastDay}::date as last_day,
      ${ACCOUNT_ID}::uuid as account_id, ${sql.raw(linkIdSql("1"))} as hot_link,
      (select link_id from links.scan_totals order by scans, link_id offset ${LINKS / 2} limit 1) as median_link,
      ${generatedMs / 1000}::numeric as generated_seconds`.execute(database.db);
  const { rows } = await sql<Dataset>`
    select account_id, hot_link, median_link, to_char(last_day, 'YYYY-MM-DD') as last_day from public.bench_dataset`.execute(
    database.db,
  );
  return { dataset: rows[0]!, database, generatedMs };
}

/** Answers the rollup summary's questions from links.raw_scans alone (through its index), as analytics would without rollups. */
async function rawSummary(db: Kysely<unknown>, linkId: string, from: string, to: string): Promise<void> {
  // A scan's time is its key's milliseconds; the range is one of keys.
  const range = sql`link = (select number from links.links where id = ${linkId})
    and key >= ${firstKeyAt(Date.parse(from))}::int8 and key < ${firstKeyAt(Date.parse(to) + 86_400_000)}::int8`;
  const scans = sql`(select to_timestamp((key >> 20) / 1000.0) as scanned_at,
      visitor, country, device_type, os, browser, referrer_host
    from links.raw_scans join links.scan_contexts on code = context where ${range}) as scans`;
  await Promise.all([
    sql`select (scanned_at at time zone 'UTC')::date, count(*), count(distinct visitor) from ${scans} group by 1`.execute(
      db,
    ),
    sql`select count(distinct visitor) from ${scans}`.execute(db),
    sql`select d.dimension, d.value, count(*) from ${scans}, ${sql.raw(BY_DIMENSION)} group by 1, 2`.execute(db),
  ]);
}

async function timed(runs: number, once: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await once();
    times.push(performance.now() - started);
  }
  return times;
}

const addDays = (day: string, days: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

// ---------------------------------------------------------------------------------------------

/** Every promised figure beside its target, printed last. */
const targets: { figure: string; value: string; target: string; met: boolean }[] = [];

async function main(): Promise<void> {
  if (PARTS.has("redirects") || PARTS.has("rules") || PARTS.has("ingestion")) await redirectsAndIngestion();
  if (PARTS.has("embedded")) {
    const { byDefault, onAnsweringThread, ceiling, ceilingStallMs } = await embeddedRedirects();
    console.log(
      `\nnpm start (embedded, PGlite on its own thread): ${EMBEDDED_CONNECTIONS} connections for ${SECONDS} s after ${WARM_UP_SECONDS} s of warm-up, ` +
        `every redirect recorded; as it starts (a recording thread), then with SCAN_RECORDING_THREAD=false\n`,
    );
    console.log(
      "| server | requests/s | vs ceiling | p50 ms | p99 ms | longest event-loop stall | scans recorded | scans stored | stored within |",
    );
    console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    const runs = [
      ["npm start", byDefault],
      ["npm start, recording on the answering thread", onAnsweringThread],
    ] as const;
    for (const [name, run] of runs) {
      const { perSecond, p50, p99 } = run.result;
      console.log(
        `| ${name} | ${perSecond.toFixed(0)} | ${(perSecond / ceiling.perSecond).toFixed(2)}x | ${p50.toFixed(2)} | ${p99.toFixed(2)} | ` +
          `${run.maxStallMs.toFixed(1)} ms | ${run.recorded} | ${run.stored} | ${run.drainMs.toFixed(0)} ms after the load |`,
      );
    }
    console.log(
      `| ceiling: bare node:http, same load | ${ceiling.perSecond.toFixed(0)} | 1.00x | ${ceiling.p50.toFixed(2)} | ${ceiling.p99.toFixed(2)} | ` +
        `${ceilingStallMs.toFixed(1)} ms | | | |`,
    );
    const { p99 } = byDefault.result;
    targets.push(
      {
        figure: `npm start: p99 of recorded redirects at ${EMBEDDED_CONNECTIONS} connections`,
        value: `${p99.toFixed(1)} ms`,
        target: "≤ 25 ms",
        met: p99 <= 25,
      },
      {
        figure: "npm start: longest event-loop stall while scans are stored",
        value: `${byDefault.maxStallMs.toFixed(1)} ms`,
        target: "≤ 20 ms",
        met: byDefault.maxStallMs <= 20,
      },
      ...runs.map(([name, run]) => ({
        figure: `${name}: scans stored / scans recorded`,
        value: `${run.stored} / ${run.recorded}`,
        target: "equal (exactly once)",
        met: run.stored === run.recorded,
      })),
    );
  }
  if (PARTS.has("analytics")) await analyticsAtScale();
  // Bytes per stored scan; BENCH_STORAGE_SCANS measures on fewer scans (the figures are per scan).
  if (PARTS.has("storage"))
    targets.push(
      ...(await scanStorageBudget(
        SERVER_URL,
        databaseUrl,
        `${DB_PREFIX}_scan_storage`,
        Number(process.env.BENCH_STORAGE_SCANS ?? 1_000_000),
      )),
    );

  console.log("\nTargets (ratios are to the ceiling measured in this same run)\n");
  console.log("| figure | measured | target | met |");
  console.log("|---|---:|---:|:---:|");
  for (const { figure, value, target, met } of targets)
    console.log(`| ${figure} | ${value} | ${target} | ${met ? "yes" : "**no**"} |`);
}

async function redirectsAndIngestion(): Promise<void> {
  // 1 and 2: a fresh database with LINKS links made through LinkService.CreateLink.
  await adminQuery(`drop database if exists ${REDIRECTS_DB} with (force)`);
  await adminQuery(`create database ${REDIRECTS_DB}`);
  const database = await openDatabase({ databaseUrl: databaseUrl(REDIRECTS_DB), dataDir: "" });
  let figures: RedirectFigures | undefined;
  let rules: RulesFigures | undefined;
  let ingest: IngestionFigures | undefined;
  try {
    const module = await buildLinks({
      db: database.db,
      shortLinkBaseUrl: SHORT_BASE,
      pageTokenSecret: PAGE_TOKEN_SECRET,
    });
    const links = createClient(
      LinkService,
      inProcessTransport({ modules: [module], credentials, logger, token: credentials.serviceToken }),
    );
    const accountId = randomUUID();
    const slugs = new Map<string, string>();
    for (let i = 0; i < LINKS; i += 50) {
      const created = await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          links.createLink({ accountId, destinationUrl: `https://example.com/menu/${i + j}?table=${j}` }),
        ),
      );
      for (const { link } of created) slugs.set(link!.slug, link!.destinationUrl);
    }
    if (PARTS.has("redirects")) figures = await redirectThroughput(database, slugs);
    if (PARTS.has("rules")) {
      // RULE_LINKS codes with rules, made as the catalog makes them, beside as many of the codes without.
      const routed = new Map<string, string>();
      const routing = { rules: failingRules(RULES, RULE_COUNTRIES).map(ruleInitOf) };
      for (let i = 0; i < RULE_LINKS; i += 50) {
        const created = await Promise.all(
          Array.from({ length: Math.min(50, RULE_LINKS - i) }, (_, j) =>
            links.createLink({ accountId, destinationUrl: `https://example.com/menu/${i + j}?table=${j}`, routing }),
          ),
        );
        for (const { link } of created) routed.set(link!.slug, link!.destinationUrl);
      }
      rules = await rulesCost(new Map([...slugs].slice(0, RULE_LINKS)), routed);
    }
    // The scans just stored would start autovacuum in the middle of the ingestion runs: vacuumed now.
    if (figures || rules) await sql`VACUUM (ANALYZE)`.execute(database.db);
    if (PARTS.has("ingestion")) ingest = await ingestion(database);
  } finally {
    await database.close();
  }

  if (figures) {
    const ceiling = figures.rows[0]!.result;
    console.log(
      `\nRedirects (wrk): ${CONNECTIONS} connections, ${SECONDS} s each after ${WARM_UP_SECONDS} s of warm-up, in ${REDIRECT_ROUNDS} turns that ` +
        `alternate between the servers; ${LINKS} slugs, phone User-Agents, each request from a new visitor, each server in its own process\n`,
    );
    // The request thread's CPU is what bounds one process where cores are free; the rest runs beside it.
    // The last column is every process's CPU per redirect, wrk's too: what two cores are shared by.
    console.log(
      "| scenario | requests/s | vs ceiling | p50 ms | p99 ms | p99 vs ceiling | server CPU per redirect | of it, the request thread " +
        "| Postgres | wrk | all | longest event-loop stall |",
    );
    console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (const { scenario, result } of figures.rows) {
      const { perSecond, p50, p99, cpuMicros, requestThreadCpuMicros, postgresCpuMicros, wrkCpuMicros, maxStallMs } =
        result;
      const all = cpuMicros + postgresCpuMicros + wrkCpuMicros;
      console.log(
        `| ${scenario} | ${perSecond.toFixed(0)} | ${(perSecond / ceiling.perSecond).toFixed(2)}x | ${p50.toFixed(2)} | ${p99.toFixed(2)} | ` +
          `${(p99 / ceiling.p99).toFixed(1)}x | ${cpuMicros.toFixed(0)} µs | ${requestThreadCpuMicros.toFixed(0)} µs | ` +
          `${postgresCpuMicros.toFixed(0)} µs | ${wrkCpuMicros.toFixed(0)} µs | ${all.toFixed(0)} µs | ${maxStallMs.toFixed(1)} ms |`,
      );
    }
    const { paced } = figures;
    console.log(
      `\nAt one rate: ${paced.rate} requests/s over the same ${CONNECTIONS} connections, ${PACED_SECONDS} s each ` +
        `in ${REDIRECT_ROUNDS} turns (each connection pauses after an answer, so a slower server answers a little below the rate):\n\n` +
        "| scenario | requests/s | p50 ms | p99 ms | p99 vs ceiling | longest event-loop stall |\n|---|---:|---:|---:|---:|---:|\n" +
        [
          ["ceiling: bare node:http, 302 from a Map", paced.ceiling],
          ["redirector, cached, recording scans", paced.recording],
          ["redirector, cached, no recording", paced.cached],
        ]
          .map(([name, run]) => {
            const { perSecond, p50, p99, maxStallMs } = run as LoadResult;
            return (
              `| ${name as string} | ${perSecond.toFixed(0)} | ${p50.toFixed(2)} | ${p99.toFixed(2)} | ${(p99 / paced.ceiling.p99).toFixed(1)}x | ` +
              `${maxStallMs.toFixed(1)} ms |`
            );
          })
          .join("\n"),
    );
    console.log(
      `\nScans while recording: ${figures.answered} redirects counted by wrk (warm-up, the pause's trial and the paced turns included; it misses those in flight ` +
        `when a turn ends), ${figures.recorded} scans taken by the recorder, ${figures.stored} stored; after each turn the buffer was empty ` +
        `within ${figures.drainMs.toFixed(0)} ms, and the oldest unstored scan was at most ${figures.maxOldestUnstoredMs.toFixed(0)} ms old during the load.`,
    );
    const recording = figures.rows[1]!.result;
    // Per core: the CPU a recorded redirect costs the links process (every thread), alone and with its
    // Postgres backends, over the bare server's CPU per redirect, both from the turns at full speed.
    const perCore = recording.cpuMicros / ceiling.cpuMicros;
    const withPostgres = (recording.cpuMicros + recording.postgresCpuMicros) / ceiling.cpuMicros;
    console.log(
      `\nPer core: a recorded redirect cost the links process ${recording.cpuMicros.toFixed(1)} µs of CPU (every thread; ` +
        `the answering thread ${recording.requestThreadCpuMicros.toFixed(1)}) and its Postgres backends ${recording.postgresCpuMicros.toFixed(1)} µs, ` +
        `against ${ceiling.cpuMicros.toFixed(1)} µs for the bare server's redirect.`,
    );
    targets.push(
      {
        figure: "services: CPU per recorded redirect, links process (all threads) vs the bare server's",
        value: `${perCore.toFixed(2)}x (${recording.cpuMicros.toFixed(1)} / ${ceiling.cpuMicros.toFixed(1)} µs)`,
        target: "≤ 2.0x",
        met: perCore <= 2,
      },
      {
        figure: "services: CPU per recorded redirect, links process and its Postgres backends vs the bare server's",
        value: `${withPostgres.toFixed(2)}x (${(recording.cpuMicros + recording.postgresCpuMicros).toFixed(1)} / ${ceiling.cpuMicros.toFixed(1)} µs)`,
        target: "≤ 2.5x",
        met: withPostgres <= 2.5,
      },
      {
        figure: `services: recording p99 vs the ceiling's p99, both at ${paced.rate} requests/s`,
        value: `${(paced.recording.p99 / paced.ceiling.p99).toFixed(1)}x (${paced.recording.p99.toFixed(2)} / ${paced.ceiling.p99.toFixed(2)} ms)`,
        target: "≤ 2x",
        met: paced.recording.p99 / paced.ceiling.p99 <= 2,
      },
      {
        figure: "services: scans stored / scans recorded",
        value: `${figures.stored} / ${figures.recorded}`,
        target: "equal (exactly once)",
        met: figures.stored === figures.recorded && figures.stored >= figures.answered,
      },
      {
        figure: "services: oldest unstored scan during the load",
        value: `${figures.maxOldestUnstoredMs.toFixed(0)} ms`,
        target: "bounded (≤ 1,000 ms)",
        met: figures.maxOldestUnstoredMs <= 1000,
      },
    );
  }
  if (rules) reportRules(rules);
  if (ingest) {
    const micros = (value: number | undefined) => (value === undefined ? "–" : `${value.toFixed(1)} µs`);
    console.log(
      `\nRecordScans from links processes of their own, batches of 1,000 new scans for ${SECONDS} s each way of writing, ` +
        `in ${INGESTION_ROUNDS} rounds of ${SECONDS / INGESTION_ROUNDS} s that alternate after a warm-up round ` +
        "(CPU per stored scan: the links processes, and their Postgres backends read from /proc; WAL writer and checkpointer not included):\n\n" +
        "| writers | scans/s | vs one | links CPU per scan | Postgres CPU per scan |\n|---|---:|---:|---:|---:|\n" +
        (
          [
            ["one instance, one batch at a time", ingest.one],
            ["one instance, 4 batches in parallel", ingest.fourParallel],
            ["two instances, one batch at a time each", ingest.twoInstances],
            ["two instances, 2 batches in parallel each", ingest.sustained],
          ] as const
        )
          .map(
            ([name, run]) =>
              `| ${name} | ${run.perSecond.toFixed(0)} | ${(run.perSecond / ingest.one.perSecond).toFixed(2)}x | ${micros(run.linksMicros)} | ${micros(run.postgresMicros)} |`,
          )
          .join("\n"),
    );
    const best = Math.max(
      ...[ingest.one, ingest.fourParallel, ingest.twoInstances, ingest.sustained].map((run) => run.perSecond),
    );
    const ratio = (run: IngestionRun) => run.perSecond / ingest.one.perSecond;
    targets.push(
      {
        figure: "ingestion: 4 parallel batches vs one at a time",
        value: `${ratio(ingest.fourParallel).toFixed(2)}x`,
        target: "≥ 1x",
        met: ratio(ingest.fourParallel) >= 1,
      },
      {
        figure: "ingestion: two links instances vs one",
        value: `${ratio(ingest.twoInstances).toFixed(3)}x`,
        target: "≥ 1.5x",
        met: ratio(ingest.twoInstances) >= 1.5,
      },
      {
        figure: "ingestion: sustained scans stored per second",
        value: `${best.toFixed(0)}/s`,
        target: "≥ 30,000/s",
        met: best >= 30_000,
      },
    );
  }
}

async function analyticsAtScale(): Promise<void> {
  // 3: analytics over the 10M-row dataset, through the real handler.
  const { dataset, database: scans, generatedMs } = await scansDataset();
  try {
    const module = await buildLinks({
      db: scans.db,
      shortLinkBaseUrl: SHORT_BASE,
      pageTokenSecret: PAGE_TOKEN_SECRET,
      // "Today" is the dataset's last day, so the default range is the same on every run.
      now: () => new Date(`${dataset.last_day}T12:00:00Z`),
    });
    const analytics = createClient(
      AnalyticsService,
      inProcessTransport({ modules: [module], credentials, logger, token: credentials.serviceToken }),
    );
    const { rows: totals } = await sql<{ link_id: string; scans: number }>`
      select link_id, scans from links.scan_totals where link_id in (${dataset.hot_link}, ${dataset.median_link})`.execute(
      scans.db,
    );
    const totalOf = (linkId: string) => totals.find((row) => row.link_id === linkId)?.scans ?? 0;
    const yearFrom = addDays(dataset.last_day, -365);
    const cases = [
      { name: "hot link, default 30 days", linkId: dataset.hot_link, fromDate: "", toDate: "" },
      { name: "hot link, 366 days", linkId: dataset.hot_link, fromDate: yearFrom, toDate: dataset.last_day },
      { name: "median link, default 30 days", linkId: dataset.median_link, fromDate: "", toDate: "" },
    ];
    // Day sketches are built the first time a range needs them; start from none, as a fresh install would.
    await sql`update links.scan_link_days set sketch = null where sketch is not null`.execute(scans.db);
    const rows: { name: string; scans: bigint; visitors: bigint; exact: number; firstMs: number; times: number[] }[] =
      [];
    for (const { name, linkId, fromDate, toDate } of cases) {
      const request = { accountId: dataset.account_id, linkId, fromDate, toDate };
      const [firstMs] = await timed(1, () => analytics.getLinkAnalytics(request));
      const answer = await analytics.getLinkAnalytics(request);
      const times = await timed(ANALYTICS_RUNS, () => analytics.getLinkAnalytics(request));
      const label = `${name} (${totalOf(linkId).toLocaleString("en")} scans all-time)`;
      const from = fromDate || addDays(dataset.last_day, -29);
      const { rows: exact } = await sql<{ visitors: number }>`
        select count(distinct visitor)::int as visitors from links.raw_scans
        where link = (select number from links.links where id = ${linkId})
          and key >= ${firstKeyAt(Date.parse(from))}::int8 and key < ${firstKeyAt(Date.parse(toDate || dataset.last_day) + 86_400_000)}::int8`.execute(
        scans.db,
      );
      rows.push({
        name: label,
        scans: answer.totalScans,
        visitors: answer.uniqueScans,
        exact: exact[0]!.visitors,
        firstMs: firstMs!,
        times,
      });
    }
    const monthFrom = addDays(dataset.last_day, -29);
    await rawSummary(scans.db, dataset.hot_link, monthFrom, dataset.last_day);
    const raw = await timed(3, () => rawSummary(scans.db, dataset.hot_link, monthFrom, dataset.last_day));
    const [rawYear] = await timed(1, () => rawSummary(scans.db, dataset.hot_link, yearFrom, dataset.last_day));
    // interval=hour over the 31 days it allows: the hot link's raw scans, through the index of links.raw_scans.
    const hourlyFrom = Date.parse(`${addDays(dataset.last_day, -30)}T00:00:00Z`);
    const hourlyTo = Date.parse(`${dataset.last_day}T00:00:00Z`) + 86_400_000;
    const hourly = () =>
      hourlyScans(scans.db.withSchema("links") as Kysely<LinksTables>, dataset.hot_link, hourlyFrom, hourlyTo);
    const hourlyRead = (await hourly()).reduce((sum, hour) => sum + hour.scans, 0);
    const hourlyTimes = await timed(5, hourly);

    if (generatedMs !== undefined)
      console.log(`\nGenerated the dataset in ${seconds(generatedMs)} (reused on later runs).`);
    console.log(
      `\nAnalyticsService.GetLinkAnalytics in process, ${SCAN_ROWS.toLocaleString("en")} scans over ${LINKS} links and ${DAYS} days, ` +
        `${ANALYTICS_RUNS} runs each after 2 warm-up calls\n`,
    );
    console.log("| request | scans in range | unique visitors (exact) | first call ms | p50 ms | p99 ms |");
    console.log("|---|---:|---:|---:|---:|---:|");
    for (const { name, scans: total, visitors, exact, firstMs, times } of rows) {
      const [p50, p99] = [percentile(times, 50).toFixed(1), percentile(times, 99).toFixed(1)];
      const error = exact === 0 ? 0 : ((Number(visitors) - exact) / exact) * 100;
      const exactness =
        Number(visitors) === exact
          ? "exact"
          : `${exact.toLocaleString("en")}, ${error >= 0 ? "+" : ""}${error.toFixed(2)}%`;
      console.log(
        `| ${name} | ${total.toLocaleString("en")} | ${visitors.toLocaleString("en")} (${exactness}) | ${firstMs.toFixed(0)} | ${p50} | ${p99} |`,
      );
    }
    targets.push(
      {
        figure: "analytics, hot code, 366 days, p50",
        value: `${percentile(rows[1]!.times, 50).toFixed(1)} ms`,
        target: "≤ 150 ms",
        met: percentile(rows[1]!.times, 50) <= 150,
      },
      {
        figure: "analytics, hot code, 30 days, p50",
        value: `${percentile(rows[0]!.times, 50).toFixed(1)} ms`,
        target: "≤ 30 ms",
        met: percentile(rows[0]!.times, 50) <= 30,
      },
      {
        figure: "analytics, median code, 30 days, p50",
        value: `${percentile(rows[2]!.times, 50).toFixed(1)} ms`,
        target: "≤ 5 ms",
        met: percentile(rows[2]!.times, 50) <= 5,
      },
    );
    const ratio = (rawMs: number, row: number) => (rawMs / percentile(rows[row]!.times, 50)).toFixed(1);
    console.log(
      `\nHourly counts of the hot link over 31 days (${hourlyRead.toLocaleString("en")} raw scans, interval=hour): p50 ${percentile(hourlyTimes, 50).toFixed(0)} ms over 5 runs.`,
    );
    console.log(
      `\nThe hot link's summary from the raw links.raw_scans rows instead of the rollups: 30 days p50 ${percentile(raw, 50).toFixed(0)} ms over 3 runs ` +
        `(${ratio(percentile(raw, 50), 0)}x the handler), 366 days ${rawYear!.toFixed(0)} ms once (${ratio(rawYear!, 1)}x).`,
    );
  } finally {
    await scans.close();
  }
}

await main();
