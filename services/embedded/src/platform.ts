import type { RequestListener } from "node:http";
import { join } from "node:path";
import type { WebhookOptions } from "@qrplatform/catalog";
import { databaseReadiness, openDatabase } from "@qrplatform/db";
import type { RedirectRecorder, TxtRecordsLookup } from "@qrplatform/links";
import {
  lateHandler,
  listenGrpc,
  listenHttp,
  noMetrics,
  processMetrics,
  serveMetrics,
  type Logger,
} from "@qrplatform/platform";
import type { RenderingOptions } from "@qrplatform/rendering";
import { composePlatform } from "./compose.js";
import { loadOrCreateSecrets, writeAdminCredential } from "./secrets.js";

/** Where and how the embedded platform runs. */
export interface PlatformOptions {
  /** Where PGlite's files, the secrets and the admin credential live. */
  dataDir: string;
  /** A Postgres server to use instead of PGlite. */
  databaseUrl?: string | undefined;
  /** The REST edge's address. */
  host: string;
  port: number;
  /** The gRPC address of all four services, for qrctl and internal clients; loopback by default. */
  grpcHost: string;
  grpcPort: number;
  /** Where `/metrics` of the whole platform answers; none when the port is unset. */
  metricsHost?: string;
  metricsPort?: number | undefined;
  logger: Logger;
  maxBodyBytes?: number;
  /** The short domain links are made on; by default this process's own address, which serves them. */
  shortLinkBaseUrl?: string | undefined;
  /** The scheme of vanity links on custom domains. */
  customDomainScheme?: "https" | "http";
  /** Answers the TXT records custom-domain verification asks for; the system's resolvers when unset. */
  lookupTxt?: TxtRecordsLookup;
  /** Proxies whose X-Forwarded-For is believed for scans; none by default. */
  trustedProxies?: readonly string[];
  /** A trusted proxy's header with the visitor's country; the bundled database otherwise. */
  countryHeader?: string | undefined;
  /** Where scans wait on disk while the database is away; DATA_DIR/scan-spool by default. */
  scanSpoolDir?: string | undefined;
  /** Days of raw scans kept (SCAN_RETENTION_DAYS); the links service's default when unset. */
  scanRetentionDays?: number | undefined;
  /**
   * Whether scans are classified and stored on a thread of their own (as `npm start` runs unless
   * SCAN_RECORDING_THREAD=false), so the answering thread only captures a few fields of each
   * redirect; when unset, on the thread that answers (ADR 0014).
   */
  scanRecordingThread?: boolean;
  /** The rendering service's cache, concurrency and per-account queues; defaults when unset. */
  rendering?: RenderingOptions;
  /** How webhooks are delivered; production's defaults when unset. */
  webhooks?: Partial<WebhookOptions>;
  /** The built console the edge serves at /console/; none when unset. */
  consoleDir?: string | undefined;
}

/** A running embedded platform. */
export interface Platform {
  /** The REST API's base URL, ending in /api/v1. */
  readonly apiUrl: string;
  /** The short domain of generated links. */
  readonly shortLinkBaseUrl: string;
  /** The base URL of the gRPC port. */
  readonly grpcUrl: string;
  /** The file holding the admin credential for qrctl. */
  readonly adminCredentialPath: string;
  /** Where Prometheus scrapes the whole platform, when a metrics port was given. */
  readonly metricsUrl: string | undefined;
  /** Where the short links' scans wait to be stored. */
  readonly recorder: RedirectRecorder;
  /** Drains HTTP and gRPC, stores the scans still buffered, then closes the database. */
  close(): Promise<void>;
}

/**
 * The whole platform in one process, as `npm start` runs it: the composed platform ({@link composePlatform})
 * on one HTTP port, its four services on a gRPC port, and the secrets and database kept under the data directory.
 */
export async function startPlatform(options: PlatformOptions): Promise<Platform> {
  const { logger } = options;
  const secrets = loadOrCreateSecrets(options.dataDir);
  // One registry for the whole process: every service's instruments, the in-process RPCs and the edge.
  const metrics = options.metricsPort === undefined ? noMetrics : processMetrics();

  // Every port listens first: a busy one is reported at once rather than after the migrations, and
  // the HTTP port's address is the default short domain the links are made on. While the services
  // start (waiting out a database outage, say) /healthz answers and everything else gets a 503.
  const handler = lateHandler(startingHttp);
  const http = await listenHttp({
    handler: handler.listener,
    host: options.host,
    port: options.port,
    logger,
    name: "REST edge and short links",
  });
  const grpc = await listenGrpc({ logger, host: options.grpcHost, port: options.grpcPort });
  const metricsHost = options.metricsHost ?? "127.0.0.1";
  const metricsServer =
    options.metricsPort === undefined
      ? undefined
      : await serveMetrics({ metrics, host: metricsHost, port: options.metricsPort, logger });
  // PGlite on a thread of its own: storing a batch of scans or a year of analytics never stalls redirects.
  const database = await openDatabase({
    databaseUrl: options.databaseUrl,
    dataDir: join(options.dataDir, "pglite"),
    pgliteThread: true,
  });
  // One database behind every service: while it is away they all answer UNAVAILABLE and not ready.
  const readiness = databaseReadiness(database, { logger, metrics });
  const ownUrl = `http://${urlHost(options.host)}:${http.port}`;
  const shortLinkBaseUrl = options.shortLinkBaseUrl ?? ownUrl;
  const platform = await composePlatform(
    { database, readiness, secrets, logger, metrics, lookupTxt: options.lookupTxt },
    {
      shortLinkBaseUrl,
      customDomainScheme: options.customDomainScheme,
      maxBodyBytes: options.maxBodyBytes,
      trustedProxies: options.trustedProxies,
      countryHeader: options.countryHeader,
      scanSpoolDir: options.scanSpoolDir ?? join(options.dataDir, "scan-spool"),
      scanRetentionDays: options.scanRetentionDays,
      scanRecordingThread: options.scanRecordingThread,
      rendering: options.rendering,
      webhooks: options.webhooks,
      consoleDir: options.consoleDir,
    },
  );
  const { tenancy, catalog, links, rendering } = platform.modules;
  grpc.serve({ modules: [tenancy, catalog, links, rendering], credentials: platform.credentials, readiness, metrics });
  const grpcUrl = `http://${urlHost(options.grpcHost)}:${grpc.port}`;
  const adminCredentialPath = writeAdminCredential(options.dataDir, grpcUrl, secrets.adminToken);
  handler.set(platform.listener);

  return {
    apiUrl: `${ownUrl}/api/v1`,
    shortLinkBaseUrl,
    grpcUrl,
    adminCredentialPath,
    metricsUrl: metricsServer && `http://${urlHost(metricsHost)}:${metricsServer.port}/metrics`,
    recorder: platform.recorder,
    async close() {
      platform.drain();
      await Promise.all([http.close(), grpc.close()]);
      readiness.close();
      // Every redirect has been answered: the composed platform stores its scans, then the database closes.
      await platform.close();
      await database.close();
      await metricsServer?.close();
    },
  };
}

/** The HTTP port while the services start: alive (/healthz), and 503 to everything else. */
const startingHttp: RequestListener = (req, res) => {
  const alive = (req.url ?? "").split("?", 1)[0] === "/healthz";
  res.writeHead(alive ? 200 : 503, { "content-type": "application/json", ...(alive ? {} : { "retry-after": "1" }) });
  res.end(JSON.stringify(alive ? { status: "ok" } : { status: "starting" }));
};

/** A host as it appears in a URL a user can open: wildcard addresses become loopback. */
function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}
