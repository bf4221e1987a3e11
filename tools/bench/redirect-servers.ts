// The servers the redirect benchmark (redirects.ts) loads, one per process so the load generator
// never shares their event loop. Usage: redirect-servers.ts <mode> [slugs.json]
//   ceiling    a bare node:http server answering 302 from an in-memory Map read from slugs.json
//   recording  the links service's redirect path: cached resolver, scans classified and recorded
//   cached     the same redirector and cache without recording
// recording and cached serve the links service on DATABASE_URL with SHORT_LINK_BASE_URL.
// Prints {"port": n} on stdout once listening, and {"cpuMs": n, "pendingScans": n} on each SIGUSR2;
// logs go to stderr. SIGTERM stops taking requests, stores every buffered scan, and exits.
import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { openDatabase } from "@qrplatform/db";
import { createLogger, inProcessTransport, listenHttp } from "@qrplatform/platform";
import { startRedirectPath } from "../../services/links/src/redirects/redirect-path.js";
import { buildLinks, buildRedirector, cachedResolver, memoryInvalidationBus, resolveVia } from "../../services/links/src/server.js";

const CREDENTIALS = { serviceToken: "s".repeat(32), adminToken: "a".repeat(32) };

const logger = createLogger({ service: "bench", level: process.env.LOG_LEVEL ?? "warn", destination: pino.destination(2) });

interface Server {
  port: number;
  /** Scans classified but not yet stored. */
  pendingScans(): number;
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
    pendingScans: () => 0,
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
    pageTokenSecret: "p".repeat(32),
    invalidations,
  });
  const transport = inProcessTransport({ modules: [links], credentials: CREDENTIALS, logger, token: CREDENTIALS.serviceToken });
  let handler: http.RequestListener;
  let stop: () => Promise<void>;
  let pendingScans = () => 0;
  if (recording) {
    // Behind a load balancer on loopback: the visitor's address (and so its country) is X-Forwarded-For.
    const path = await startRedirectPath({ transport, invalidations, visitorKeySecret: "v".repeat(32), trustedProxies: ["loopback"], logger });
    handler = path.handler;
    pendingScans = () => path.recorder.pending;
    stop = () => path.close();
  } else {
    const cache = cachedResolver(resolveVia(transport), invalidations);
    handler = buildRedirector({ resolve: cache.resolve, logger });
    stop = async () => cache.close();
  }
  const server = await listenHttp({ handler, host: "127.0.0.1", port: 0, logger, name: "redirector" });
  return {
    port: server.port,
    pendingScans,
    async close() {
      await server.close();
      await stop();
      await database.close();
    },
  };
}

async function main(): Promise<void> {
  const [mode, slugsFile] = process.argv.slice(2);
  if (mode !== "ceiling" && mode !== "recording" && mode !== "cached") throw new Error(`unknown mode "${mode}": ceiling, recording or cached`);
  if (mode === "ceiling" && !slugsFile) throw new Error("the ceiling server needs the slugs file");
  const server = mode === "ceiling" ? await ceiling(slugsFile!) : await redirector(mode === "recording");
  process.once("SIGTERM", () => {
    void server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "could not close");
        process.exit(1);
      },
    );
  });
  process.on("SIGUSR2", () => {
    const { user, system } = process.cpuUsage();
    process.stdout.write(`${JSON.stringify({ cpuMs: (user + system) / 1000, pendingScans: server.pendingScans() })}\n`);
  });
  process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
}

await main();
