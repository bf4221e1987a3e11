import type { RequestListener } from "node:http";
import { join } from "node:path";
import type { Transport } from "@connectrpc/connect";
import { buildCatalog, type WebhookOptions } from "@qrplatform/catalog";
import { databaseReadiness, openDatabase, whenDatabaseAnswers } from "@qrplatform/db";
import { buildEdge, DEFAULT_MAX_BODY_BYTES, isEdgeUrl } from "@qrplatform/edge";
import { buildLinks, memoryInvalidationBus, recordingThreadStorage, startRedirectPath, type RedirectRecorder, type TxtRecordsLookup } from "@qrplatform/links";
import {
  inProcessTransport,
  lateHandler,
  listenGrpc,
  listenHttp,
  memoryAccessChanges,
  memoryScanChanges,
  noMetrics,
  processMetrics,
  serveMetrics,
  type GrpcModule,
  type InternalCredentials,
  type Logger,
} from "@qrplatform/platform";
import { buildRendering, type RenderingOptions } from "@qrplatform/rendering";
import { buildTenancy } from "@qrplatform/tenancy";
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
 * The whole platform in one process: the four services wired through in-process transports (the same
 * handlers, clients and interceptors as the distributed mode), the REST edge, and a gRPC port.
 */
export async function startPlatform(options: PlatformOptions): Promise<Platform> {
  const { logger } = options;
  const secrets = loadOrCreateSecrets(options.dataDir);
  const credentials: InternalCredentials = { serviceToken: secrets.serviceToken, adminToken: secrets.adminToken };
  // One registry for the whole process: every service's instruments, the in-process RPCs and the edge.
  const metrics = options.metricsPort === undefined ? noMetrics : processMetrics();

  // Every port listens first: a busy one is reported at once rather than after the migrations, and
  // the HTTP port's address is the default short domain the links are made on. While the services
  // start (waiting out a database outage, say) /healthz answers and everything else gets a 503.
  const handler = lateHandler(startingHttp);
  const http = await listenHttp({ handler: handler.listener, host: options.host, port: options.port, logger, name: "REST edge and short links" });
  const grpc = await listenGrpc({ logger, host: options.grpcHost, port: options.grpcPort });
  const metricsHost = options.metricsHost ?? "127.0.0.1";
  const metricsServer =
    options.metricsPort === undefined ? undefined : await serveMetrics({ metrics, host: metricsHost, port: options.metricsPort, logger });
  // PGlite on a thread of its own: storing a batch of scans or a year of analytics never stalls redirects.
  const database = await openDatabase({ databaseUrl: options.databaseUrl, dataDir: join(options.dataDir, "pglite"), pgliteThread: true });
  // One database behind every service: while it is away they all answer UNAVAILABLE and not ready.
  const readiness = databaseReadiness(database, { logger, metrics });
  const local = (modules: GrpcModule[]): Transport =>
    inProcessTransport({ modules, credentials, logger, token: credentials.serviceToken, readiness, metrics });
  const ownUrl = `http://${urlHost(options.host)}:${http.port}`;
  const shortLinkBaseUrl = options.shortLinkBaseUrl ?? ownUrl;
  // Started during an outage, each service waits for the database instead of the process exiting.
  const whenMigrated = <T>(build: () => Promise<T>) => whenDatabaseAnswers(build, { logger, what: "migrating" });

  // One process: tenancy's announcements of revoked keys and changed accounts reach the edge in memory.
  const accessChanges = memoryAccessChanges(logger);
  const tenancy = await whenMigrated(() => buildTenancy({ db: database.db, pageTokenSecret: secrets.pageTokenSecret, accessChanges }));
  // One process: changes to links reach the redirector's cache in memory, and stored scans the catalog's.
  const invalidations = memoryInvalidationBus(logger);
  const scanChanges = memoryScanChanges(logger);
  const links = await whenMigrated(() =>
    buildLinks({
      db: database.db,
      pageTokenSecret: secrets.pageTokenSecret,
      shortLinkBaseUrl,
      customDomainScheme: options.customDomainScheme,
      lookupTxt: options.lookupTxt,
      invalidations,
      scanChanges,
      ...(options.scanRetentionDays === undefined ? {} : { scanRetentionDays: options.scanRetentionDays }),
      onPartitionError: (error) => logger.error({ err: error }, "making or dropping scan partitions failed; tried again within the hour"),
    }),
  );
  const rendering = await buildRendering({ ...options.rendering, metrics });
  const catalog = await whenMigrated(() =>
    buildCatalog({
      db: database.db,
      pageTokenSecret: secrets.pageTokenSecret,
      transports: { tenancy: local([tenancy]), links: local([links]), rendering: local([rendering]) },
      logger,
      metrics,
      webhooks: options.webhooks,
      scanChanges,
    }),
  );
  catalog.reconciler.start();
  catalog.webhooks.start();
  const modules = [tenancy, catalog, links, rendering];

  grpc.serve({ modules, credentials, readiness, metrics });
  const grpcUrl = `http://${urlHost(options.grpcHost)}:${grpc.port}`;
  const adminCredentialPath = writeAdminCredential(options.dataDir, grpcUrl, credentials.adminToken);

  const redirectPath = await startRedirectPath({
    transport: local([links]),
    storeScans: links.storeCheckedScans,
    recordingThread: options.scanRecordingThread ? recordingThreadStorage(links, database) : undefined,
    invalidations,
    visitorKeySecret: secrets.visitorKeySecret,
    trustedProxies: options.trustedProxies,
    countryHeader: options.countryHeader,
    spoolDir: options.scanSpoolDir ?? join(options.dataDir, "scan-spool"),
    logger,
    metrics,
  });
  let draining = false;
  const edge = buildEdge({
    transports: { tenancy: local([tenancy]), catalog: local([catalog]), links: local([links]), rendering: local([rendering]) },
    logger,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    isDraining: () => draining,
    fallback: redirectPath.handler,
    metrics,
    accessChanges,
  });
  // Short links go straight to the redirector, as on the links process: a scan is the hottest
  // request there is, and the edge's middleware (access log, request metrics) does nothing for it.
  const shortLinks = redirectPath.handler;
  handler.set((req, res) => (isEdgeUrl(req.url ?? "/") ? edge(req, res) : shortLinks(req, res)));

  return {
    apiUrl: `${ownUrl}/api/v1`,
    shortLinkBaseUrl,
    grpcUrl,
    adminCredentialPath,
    metricsUrl: metricsServer && `http://${urlHost(metricsHost)}:${metricsServer.port}/metrics`,
    recorder: redirectPath.recorder,
    async close() {
      draining = true;
      await Promise.all([http.close(), grpc.close()]);
      readiness.close();
      // Every redirect has been answered; its scan is stored before the database closes.
      await redirectPath.close();
      await catalog.reconciler.stop();
      await catalog.webhooks.stop();
      await rendering.renderer.close();
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
