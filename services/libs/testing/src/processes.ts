// Helpers for tests that run processes of their own: service processes, free ports, and a Redis to
// stop and start, an OTLP receiver that keeps the spans it is sent, and a change bus to disconnect.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { fileURLToPath } from "node:url";
import type { ChangeBus } from "@qrplatform/platform";

/** The repository root, where service entry points are named from. */
export const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

/** Whether a `redis-server` binary is on the PATH (`npm test` installs one when it can). */
export const hasRedisServer = (): boolean => spawnSync("redis-server", ["--version"]).status === 0;

/**
 * A TCP port nothing listens on right now, and nothing else will pick before its user listens on it.
 *
 * Port 0 would hand out an ephemeral port, from the range the kernel also gives outgoing connections:
 * between this check and a child process's `listen`, any client socket on the machine could take it
 * (EADDRINUSE). So ports come from below that range, and each vitest worker draws from a slice of its
 * own, so that test files running in parallel never draw the same one.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < PORT_SLICE_SIZE; tries++) {
    const port = PORT_SLICE_START + (nextPortOffset++ % PORT_SLICE_SIZE);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${PORT_SLICE_START}-${PORT_SLICE_START + PORT_SLICE_SIZE - 1}`);
}

const LOWEST_PORT = 10_000;
const PORT_SLICES = 16;
/** Where the kernel's ephemeral ports begin (Linux; 32768 is its default and a safe guess elsewhere). */
const EPHEMERAL_START = (() => {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
})();
// Slices of at least 64 ports, even where the ephemeral range starts unusually low.
const PORT_SLICE_SIZE = Math.floor(
  (Math.max(EPHEMERAL_START, LOWEST_PORT + PORT_SLICES * 64) - LOWEST_PORT) / PORT_SLICES,
);
const PORT_SLICE_START = LOWEST_PORT + (Number(process.env.VITEST_POOL_ID ?? 0) % PORT_SLICES) * PORT_SLICE_SIZE;
/** Starts anywhere in the slice, so a worker's next test file does not retry the ports its last one used. */
let nextPortOffset = Math.floor(Math.random() * PORT_SLICE_SIZE);

function canListen(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A Redis of the test's own on this port, so stopping it disturbs nothing else. */
export async function startRedis(port: number): Promise<ChildProcess> {
  const redis = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: "pipe" },
  );
  await new Promise<void>((resolve, reject) => {
    redis.once("error", reject);
    redis.once("exit", (code) => reject(new Error(`redis-server exited with ${code}`)));
    redis.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("Ready to accept connections") && resolve());
  });
  return redis;
}

/** Kills a Redis at once, as a crash would. */
export async function killRedis(redis: ChildProcess): Promise<void> {
  if (redis.exitCode !== null || redis.signalCode !== null) return;
  const exited = new Promise((resolve) => redis.once("exit", resolve));
  redis.kill("SIGKILL");
  await exited;
}

/** A spawned service process with everything it printed. */
export interface ServiceProcess {
  readonly child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** The JSON log lines printed to stdout so far. */
  logLines(): Record<string, unknown>[];
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  readonly exited: Promise<number | string>;
}

/**
 * Runs `entry` (relative to the repository root) with exactly the given environment plus PATH: a
 * TypeScript source through tsx, a compiled file of dist/ with plain node.
 */
export function spawnService(entry: string, env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, entry.endsWith(".ts") ? ["--import", "tsx", entry] : [entry], {
    cwd: REPO_ROOT,
    // Metrics on any free port unless the test names one: processes of parallel tests never collide on 9464.
    env: { PATH: process.env.PATH ?? "", METRICS_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
  });
  return {
    child,
    exited,
    output: () => `${stdout}${stderr}`,
    logLines: () =>
      stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** Waits for a log line matching `match`, failing early with the process's output if it exits first. */
export async function waitForLog(
  service: ServiceProcess,
  match: (line: Record<string, unknown>) => boolean,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let exited: number | string | undefined;
  void service.exited.then((code) => (exited = code));
  for (;;) {
    const line = service.logLines().find(match);
    if (line) return line;
    if (exited !== undefined) throw new Error(`The process exited (${exited}) first:\n${service.output()}`);
    if (Date.now() > deadline) throw new Error(`No such log line within ${timeoutMs} ms:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resolves with the exit code, or rejects if the process is still running after `timeoutMs`. */
export function exitWithin(service: ServiceProcess, timeoutMs: number): Promise<number | string> {
  return Promise.race([
    service.exited,
    new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`Still running after ${timeoutMs} ms:\n${service.output()}`)),
        timeoutMs,
      ).unref(),
    ),
  ]);
}

/** Whether a TCP connection to the port is refused. */
export function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

/**
 * A count that grows in the background (scans being stored, say), once it has reached `expected` and
 * then stayed put a little longer, so a test sees overshoot as well as shortfall.
 */
export async function settledCount(read: () => Promise<number>, expected: number, timeoutMs = 15_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while ((await read()) < expected && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  await new Promise((resolve) => setTimeout(resolve, 600));
  return read();
}

/** One scrape of a `/metrics` endpoint, parsed by a Prometheus text-format parser. */
export interface Scrape {
  /** The metric families' names. */
  readonly names: ReadonlySet<string>;
  /**
   * The sum of the samples of `name` whose labels include `labels`: a counter's or gauge's value, a
   * histogram's `_count`; 0 when there is none.
   */
  value(name: string, labels?: Record<string, string>): number;
  /** The label sets of a family's samples (a histogram's: those of its `_count`). */
  labelSets(name: string): Record<string, string>[];
}

/**
 * Fetches and parses `/metrics` with promotel's parser of the text exposition format (into Prometheus
 * remote-write time series); fails unless it answers 200 in that format and every line parses.
 */
export async function scrapeMetrics(url: string): Promise<Scrape> {
  const { parse } = await import("@platformatic/promotel");
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  if (!res.headers.get("content-type")?.startsWith("text/plain; version=0.0.4")) {
    throw new Error(`${url} is not in the Prometheus text format: ${res.headers.get("content-type")}`);
  }
  const written = parse(await res.text());
  // A series: its family's name and its own labels. The parser names the family and a histogram's
  // part (bucket, sum, count) in labels of its own.
  const series = (written.timeseries ?? []).map((timeseries) => {
    const labels: Record<string, string> = {};
    for (const label of timeseries.labels ?? []) labels[label.name!] = label.value!;
    const { __metric_name: family = labels.__name__ ?? "", __suffix: part, __name__: _name, ...own } = labels;
    return { family, part, labels: own, value: Number(timeseries.samples?.[0]?.value ?? 0) };
  });
  const names = new Set((written.metadata ?? []).map((family) => family.metric_family_name ?? ""));
  for (const sample of series) names.add(sample.family);
  // Counters and gauges have no part; histograms are read by their count.
  const counted = (name: string) =>
    series.filter((sample) => sample.family === name && (sample.part === undefined || sample.part === "count"));
  return {
    names,
    value: (name, labels = {}) =>
      counted(name)
        .filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
        .reduce((total, sample) => total + sample.value, 0),
    labelSets: (name) => counted(name).map((sample) => sample.labels),
  };
}

/** One file of a ZIP archive, as readZip reads it. */
export interface ZipEntry {
  /** The entry's path inside the archive. */
  name: string;
  /** Whether it was stored deflated. */
  deflated: boolean;
  data: Buffer;
}

/**
 * Reads a whole ZIP archive with yauzl (another library than the one that writes them), checking every
 * entry's CRC; rejects when the archive is broken or cut short.
 */
export async function readZip(archive: Buffer): Promise<ZipEntry[]> {
  const { fromBuffer } = await import("yauzl");
  return new Promise((resolve, reject) => {
    fromBuffer(archive, { lazyEntries: true, validateEntrySizes: true }, (openError, zip) => {
      if (openError) return reject(openError);
      const entries: ZipEntry[] = [];
      zip.on("error", reject);
      zip.on("end", () => resolve(entries));
      zip.on("entry", (entry: import("yauzl").Entry) => {
        zip.openReadStream(entry, (readError, stream) => {
          if (readError) return reject(readError);
          const chunks: Buffer[] = [];
          stream.on("data", (chunk: Buffer) => chunks.push(chunk));
          stream.on("error", reject);
          stream.on("end", () => {
            entries.push({
              name: entry.fileName,
              deflated: entry.compressionMethod === 8,
              data: Buffer.concat(chunks),
            });
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

/**
 * A bus whose connection the test decides: `up = false` makes it report itself disconnected (as a
 * Redis bus whose subscriber dropped) while messages still pass, so caches must fall back to their
 * bound on staleness.
 */
export function switchableBus<T, B extends ChangeBus<T>>(inner: B): B & { up: boolean } {
  const bus = {
    ...inner,
    up: true,
    publish: inner.publish.bind(inner),
    subscribe: inner.subscribe.bind(inner),
    close: inner.close.bind(inner),
    get connected(): boolean {
      return bus.up;
    },
  };
  return bus as B & { up: boolean };
}

/**
 * Addresses that carry an IPv4 address inside IPv6, each with the IPv4 address it leads to: every one
 * must be refused by the address rules (isPublicAddress), as a URL's host and as a DNS answer.
 * IPv4-compatible ones appear in both spellings, since ipaddr.js reads the dotted one differently.
 */
export const EMBEDDED_IPV4_ADDRESSES: readonly { address: string; form: string; inside: string }[] = [
  { address: "::ffff:127.0.0.1", form: "IPv4-mapped", inside: "127.0.0.1" },
  { address: "::ffff:a9fe:a9fe", form: "IPv4-mapped", inside: "169.254.169.254" },
  { address: "::127.0.0.1", form: "IPv4-compatible", inside: "127.0.0.1" },
  { address: "::7f00:1", form: "IPv4-compatible", inside: "127.0.0.1" },
  { address: "::a9fe:a9fe", form: "IPv4-compatible", inside: "169.254.169.254" },
  { address: "::169.254.169.254", form: "IPv4-compatible", inside: "169.254.169.254" },
  { address: "::a00:1", form: "IPv4-compatible", inside: "10.0.0.1" },
  { address: "::c0a8:101", form: "IPv4-compatible", inside: "192.168.1.1" },
  { address: "::6440:1", form: "IPv4-compatible", inside: "100.64.0.1" },
  { address: "::2", form: "IPv4-compatible", inside: "0.0.0.2" },
  { address: "::ffff:0:a00:1", form: "SIIT", inside: "10.0.0.1" },
  { address: "64:ff9b::7f00:1", form: "NAT64", inside: "127.0.0.1" },
  { address: "64:ff9b::a9fe:a9fe", form: "NAT64", inside: "169.254.169.254" },
  { address: "64:ff9b:1::a00:1", form: "NAT64 local-use", inside: "10.0.0.1" },
  { address: "2002:7f00:1::1", form: "6to4", inside: "127.0.0.1" },
  { address: "2002:a9fe:a9fe::1", form: "6to4", inside: "169.254.169.254" },
  { address: "2001:0:a00:1::1", form: "Teredo", inside: "10.0.0.1" },
  { address: "2001:4860:1::5efe:a00:1", form: "ISATAP", inside: "10.0.0.1" },
  { address: "2001:4860:1::200:5efe:a9fe:a9fe", form: "ISATAP", inside: "169.254.169.254" },
  { address: "2001:4860:1::5efe:7f00:1", form: "ISATAP", inside: "127.0.0.1" },
];

/** Addresses of the same forms whose IPv4 address inside is public, which the address rules accept. */
export const EMBEDDED_PUBLIC_IPV4_ADDRESSES: readonly string[] = [
  "::ffff:8.8.8.8",
  "::808:808",
  "2001:4860:1::5efe:808:808",
];
