// The servers the redirect benchmark (redirects.ts) loads, one per process so the load generator
// never shares their event loop. Usage: redirect-servers.ts <mode> [slugs.json | data dir]
//   ceiling    a bare node:http server answering 302 from an in-memory Map read from slugs.json
//   recording  the links service's redirect path: cached resolver, scans classified and recorded
//   cached     the same redirector and cache without recording
//   embedded   `npm start`'s platform (PGlite in the data dir), with links made through its gRPC port;
//              SCAN_RECORDING_THREAD as npm start reads it
//   ingest     no server: on each SIGUSR1, sends batches of 1,000 new scans to its own RecordScans for
//              BENCH_SECONDS, BENCH_PARALLEL at a time, as a links instance's recorder would
// recording, cached and ingest serve the links service on DATABASE_URL with SHORT_LINK_BASE_URL;
// recording takes the visitor's country from the header BENCH_COUNTRY_HEADER names, when set, as
// behind a proxy that sets COUNTRY_HEADER.
// Prints {"port": n} on stdout once listening (embedded: with its slugs), {"cpuMs", "requestThreadCpuMs", "pendingScans",
// "recordedScans", "oldestUnstoredMs", "maxStallMs"} on each SIGUSR2 (the longest event-loop stall
// since the last one), and {"stored", "seconds", "cpuMs"} when an ingest run ends; logs go to stderr. SIGTERM
// stops taking requests, stores every buffered scan, and exits.
import { randomBytes, randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { sql } from "kysely";
import pino from "pino";
import { LinkService, RedirectService, ScanSchema, type Scan } from "@qrplatform/api/links";
import { openDatabase } from "@qrplatform/db";
import {
  createLogger,
  inProcessTransport,
  listenHttp,
  remoteTransport,
  turnOffAllocationSitePretenuring,
} from "@qrplatform/platform";
import { startPlatform } from "../../services/embedded/src/platform.js";
import { loadOrCreateSecrets } from "../../services/embedded/src/secrets.js";
import {
  recordingThreadStorage,
  redirectPathEnv,
  startRedirectPath,
} from "../../services/links/src/redirects/redirect-path.js";
import { timeOrderedScanId } from "../../services/links/src/scans/recording/scan-id.js";
import {
  buildLinks,
  buildRedirector,
  cachedResolver,
  memoryInvalidationBus,
  resolveVia,
  type RedirectRecorder,
} from "../../services/links/src/server.js";
import { credentials, PAGE_TOKEN_SECRET, VISITOR_KEY_SECRET } from "@qrplatform/testing";

const CREDENTIALS = credentials;

const logger = createLogger({
  service: "bench",
  level: process.env.LOG_LEVEL ?? "warn",
  destination: pino.destination(2),
});

interface Server {
  port: number;
  /** Where the server's scans wait to be stored; none when it records nothing. */
  recorder?: RedirectRecorder;
  /** Links made by the server itself (embedded): slug and destination. */
  slugs?: [string, string][];
  close(): Promise<void>;
}

async function ceiling(slugsFile: string): Promise<Server> {
  const locations = new Map<string, string>(JSON.parse(await readFile(slugsFile, "utf8")) as [string, string][]);
  const server = http.createServer((req, res) => {
    const location = locations.get(req.url!.slice(1));
    res.writeHead(location ? 302 : 404, location ? { Location: location } : {});
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The links service and its redirector as the links process wires them, with or without scan recording. */
async function redirector(recording: boolean): Promise<Server> {
  const database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: "" });
  const invalidations = memoryInvalidationBus(logger);
  const links = await buildLinks({
    db: database.db,
    shortLinkBaseUrl: process.env.SHORT_LINK_BASE_URL!,
    pageTokenSecret: PAGE_TOKEN_SECRET,
    invalidations,
  });
  const transport = inProcessTransport({
    modules: [links],
    credentials: CREDENTIALS,
    logger,
    token: CREDENTIALS.serviceToken,
  });
  let handler: http.RequestListener;
  let stop: () => Promise<void>;
  let recorder: RedirectRecorder | undefined;
  if (recording) {
    // Behind a load balancer on loopback: the visitor's address (and so its country) is X-Forwarded-For.
    const path = await startRedirectPath({
      transport,
      storeScans: links.storeCheckedScans,
      // As the links process records on a Postgres server (BENCH_RECORDING_THREAD=false: on the request thread).
      recordingThread:
        process.env.BENCH_RECORDING_THREAD === "false" ? undefined : recordingThreadStorage(links, database),
      invalidations,
      reserveScan: links.reserveScan,
      visitorKeySecret: VISITOR_KEY_SECRET,
      trustedProxies: ["loopback"],
      countryHeader: process.env.BENCH_COUNTRY_HEADER || undefined,
      logger,
    });
    handler = path.handler;
    recorder = path.recorder;
    stop = () => path.close();
  } else {
    const cache = cachedResolver(resolveVia(transport), invalidations);
    handler = buildRedirector({ resolve: cache.resolve, logger });
    stop = async () => cache.close();
  }
  const server = await listenHttp({ handler, host: "127.0.0.1", port: 0, logger, name: "redirector" });
  return {
    port: server.port,
    recorder,
    async close() {
      await server.close();
      await stop();
      await database.close();
    },
  };
}

/** `npm start`'s platform on PGlite in `dataDir`, with LINKS links made through its gRPC port as qrctl would. */
async function embedded(dataDir: string): Promise<Server> {
  const platform = await startPlatform({
    dataDir,
    host: "127.0.0.1",
    port: 0,
    grpcHost: "127.0.0.1",
    grpcPort: 0,
    shortLinkBaseUrl: process.env.SHORT_LINK_BASE_URL!,
    trustedProxies: ["loopback"],
    // As npm start reads it.
    scanRecordingThread: redirectPathEnv.parse(process.env).SCAN_RECORDING_THREAD === "true",
    logger,
  });
  const links = createClient(
    LinkService,
    remoteTransport({ baseUrl: platform.grpcUrl, token: loadOrCreateSecrets(dataDir).adminToken }),
  );
  const accountId = randomUUID();
  const slugs: [string, string][] = [];
  for (let i = 0; i < Number(process.env.BENCH_LINKS ?? 1000); i += 50) {
    const created = await Promise.all(
      Array.from({ length: 50 }, (_, j) =>
        links.createLink({ accountId, destinationUrl: `https://example.com/menu/${i + j}?table=${j}` }),
      ),
    );
    for (const { link } of created) slugs.push([link!.slug, link!.destinationUrl]);
  }
  return {
    port: Number(new URL(platform.apiUrl).port),
    slugs,
    recorder: platform.recorder,
    close: () => platform.close(),
  };
}

/** Scans as a redirector sends them: of the last second, so every batch adds to today's rollup rows. */
const COUNTRIES = [
  "US",
  "DE",
  "GB",
  "FR",
  "ES",
  "IT",
  "NL",
  "BR",
  "IN",
  "JP",
  "CA",
  "AU",
  "MX",
  "PL",
  "SE",
  "CH",
  "AT",
  "BE",
  "TR",
  "KR",
  "",
];
const AGENTS = [
  ["mobile", "iOS", "Mobile Safari"],
  ["mobile", "Android", "Chrome"],
  ["mobile", "Android", "Samsung Browser"],
  ["mobile", "iOS", "Chrome"],
  ["tablet", "iOS", "Mobile Safari"],
  ["desktop", "Windows", "Chrome"],
] as const;
function syntheticBatch(linkIds: string[], size: number): Scan[] {
  const now = Date.now();
  return Array.from({ length: size }, () => {
    const pick = <T>(items: readonly T[]) => items[Math.floor(Math.random() ** 2 * items.length)]!;
    const [deviceType, os, browser] = pick(AGENTS);
    return create(ScanSchema, {
      id: timeOrderedScanId(now),
      linkId: pick(linkIds),
      scanTime: timestampFromDate(new Date(now - Math.random() * 1000)),
      country: pick(COUNTRIES),
      deviceType,
      os,
      browser,
      referrerHost: Math.random() < 0.1 ? "l.instagram.com" : "",
      visitorKey: randomBytes(16).toString("base64url").slice(0, 22),
    });
  });
}

/** A links instance that only stores: on each SIGUSR1 it sends batches for BENCH_SECONDS and reports what it stored. */
async function ingest(): Promise<void> {
  const database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: "" });
  const links = await buildLinks({
    db: database.db,
    shortLinkBaseUrl: process.env.SHORT_LINK_BASE_URL!,
    pageTokenSecret: PAGE_TOKEN_SECRET,
  });
  const redirects = createClient(
    RedirectService,
    inProcessTransport({ modules: [links], credentials: CREDENTIALS, logger, token: CREDENTIALS.serviceToken }),
  );
  const { rows } = await sql<{ id: string }>`select id from links.links`.execute(database.db);
  const linkIds = rows.map((row) => row.id);
  const parallel = Number(process.env.BENCH_PARALLEL ?? 1);
  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  // Each SIGUSR1 is one run; runs never overlap, since the benchmark waits for each one's line.
  process.on("SIGUSR1", () => {
    void (async () => {
      let stored = 0;
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      const until = started + seconds * 1000;
      await Promise.all(
        Array.from({ length: parallel }, async () => {
          // One batch per sender, given new times and ids each time (the ids of their times, as the
          // recorder makes them): the clock measures storing, not making scans.
          const batch = syntheticBatch(linkIds, 1000);
          while (performance.now() < until) {
            const now = Date.now();
            for (const scan of batch) {
              const atMs = now - Math.floor(Math.random() * 1000);
              scan.scanTime!.seconds = BigInt(Math.floor(atMs / 1000));
              scan.scanTime!.nanos = (atMs % 1000) * 1_000_000;
              scan.id = timeOrderedScanId(atMs);
            }
            // Not `stored += await ...`: that reads `stored` before the await, so parallel senders would
            // overwrite each other's additions and the figure would fall with every sender added.
            const { recordedCount } = await redirects.recordScans({ scans: batch });
            stored += recordedCount;
          }
        }),
      );
      const elapsed = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      process.stdout.write(`${JSON.stringify({ stored, seconds: elapsed, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
    })();
  });
  // Idle between runs with nothing else to wait on (the pool closes idle connections): stay until SIGTERM.
  const alive = setInterval(() => undefined, 60_000);
  process.once("SIGTERM", () => {
    clearInterval(alive);
    void database.close().then(() => process.exit(0));
  });
  process.stdout.write(`${JSON.stringify({ port: 0 })}\n`);
}

async function main(): Promise<void> {
  const [mode, slugsFile] = process.argv.slice(2);
  // As every process of the platform starts; the ceiling stays a bare node:http server.
  if (mode !== "ceiling") turnOffAllocationSitePretenuring();
  if (mode === "ingest") return ingest();
  if (mode !== "ceiling" && mode !== "recording" && mode !== "cached" && mode !== "embedded") {
    throw new Error(`unknown mode "${mode}": ceiling, recording, cached, embedded or ingest`);
  }
  if ((mode === "ceiling" || mode === "embedded") && !slugsFile)
    throw new Error(`the ${mode} server needs the slugs file or data dir`);
  const server =
    mode === "ceiling"
      ? await ceiling(slugsFile!)
      : mode === "embedded"
        ? await embedded(slugsFile!)
        : await redirector(mode === "recording");
  // The longest the event loop could not turn, as a request waiting on it would feel it.
  const stalls = monitorEventLoopDelay({ resolution: 1 });
  stalls.enable();
  process.once("SIGTERM", () => {
    void server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "could not close");
        process.exit(1);
      },
    );
  });
  const { recorder } = server;
  process.on("SIGUSR2", () => {
    const { user, system } = process.cpuUsage();
    const thread = process.threadCpuUsage();
    const maxStallMs = stalls.max / 1e6;
    stalls.reset();
    process.stdout.write(
      `${JSON.stringify({
        cpuMs: (user + system) / 1000,
        requestThreadCpuMs: (thread.user + thread.system) / 1000,
        // Scans wait in memory or spooled to disk until they are stored.
        pendingScans: recorder ? recorder.pending + recorder.spooledScans : 0,
        recordedScans: recorder?.recorded ?? 0,
        oldestUnstoredMs: recorder?.oldestUnstoredAgeMs ?? 0,
        maxStallMs,
      })}\n`,
    );
  });
  process.stdout.write(`${JSON.stringify({ port: server.port, slugs: server.slugs })}\n`);
}

await main();
