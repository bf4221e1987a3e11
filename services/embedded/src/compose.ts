import type { RequestListener } from "node:http";
import type { Transport } from "@connectrpc/connect";
import { buildCatalog, type CatalogModule, type WebhookOptions } from "@qrplatform/catalog";
import { type Database, whenDatabaseAnswers } from "@qrplatform/db";
import { buildEdge, DEFAULT_MAX_BODY_BYTES, type EdgeOptions, isEdgeUrl } from "@qrplatform/edge";
import {
  buildLinks,
  type LinksModule,
  memoryInvalidationBus,
  type RedirectRecorder,
  recordingThreadStorage,
  startRedirectPath,
  type TxtRecordsLookup,
} from "@qrplatform/links";
import {
  type GrpcModule,
  type InternalCredentials,
  inProcessTransport,
  type Logger,
  type Metrics,
  memoryAccessChanges,
  memoryScanChanges,
  noMetrics,
  type Readiness,
} from "@qrplatform/platform";
import { buildRendering, type Renderer, type RenderingOptions } from "@qrplatform/rendering";
import { buildTenancy } from "@qrplatform/tenancy";
import type { EmbeddedSecrets } from "./secrets.js";

/** What the platform runs against, passed in: `npm start` gives production's, tests their own. */
export interface PlatformPorts {
  /** The one database every service keeps its schema in; each service migrates its own as it builds. */
  database: Database;
  /** Whether the database answers: while it does not, every RPC is UNAVAILABLE. Always ready when unset. */
  readiness?: Readiness | undefined;
  /** The internal credentials and the secrets that sign page tokens and salt visitor keys. */
  secrets: EmbeddedSecrets;
  logger: Logger;
  /** The registry every service's instruments, the in-process RPCs and the edge report to; none when unset. */
  metrics?: Metrics;
  /** Where the edge counts hourly quotas; this process's memory when unset. The caller closes it. */
  quotas?: EdgeOptions["quotas"];
  /** Answers the TXT records custom-domain verification asks for; the system's resolvers when unset. */
  lookupTxt?: TxtRecordsLookup | undefined;
  /** The services' clock; the wall clock when unset. */
  now?: () => Date;
}

/** How the platform behaves: production's defaults unless given. */
export interface CompositionOptions {
  /** The short domain links are made on; the caller's HTTP port, which serves them, as a rule. */
  shortLinkBaseUrl: string;
  /** The scheme of vanity links on custom domains. */
  customDomainScheme?: "https" | "http" | undefined;
  /** The largest JSON body the edge accepts, in bytes. */
  maxBodyBytes?: number | undefined;
  /** Proxies whose X-Forwarded-For is believed for scans; none by default. */
  trustedProxies?: readonly string[] | undefined;
  /** A trusted proxy's header with the visitor's country; the bundled database otherwise. */
  countryHeader?: string | undefined;
  /** Where scans wait on disk while the database is away; in memory when unset. */
  scanSpoolDir?: string | undefined;
  /** Days of raw scans kept; the links service's default when unset. */
  scanRetentionDays?: number | undefined;
  /** Whether scans are classified and stored on a thread of their own (ADR 0014); on the answering thread when unset. */
  scanRecordingThread?: boolean | undefined;
  /** The rendering service's cache, concurrency and per-account queues. */
  rendering?: RenderingOptions | undefined;
  /** How webhooks are delivered. */
  webhooks?: Partial<WebhookOptions> | undefined;
  /** The built console the edge serves at /console/; none when unset. */
  consoleDir?: string | undefined;
  /**
   * Which of the catalog's background workers run (both, unless told otherwise): tests that do not
   * exercise them leave them off, so nothing changes the data under them.
   */
  workers?: { reconciler: boolean; webhooks: boolean } | undefined;
}

/** The platform's services and its HTTP surface, built and wired; listening is the caller's. */
export interface ComposedPlatform {
  /** The REST edge and the short links on one port: API paths to the edge, everything else to the redirector. */
  readonly listener: RequestListener;
  /** The four services, for a gRPC port (or a test's own in-process clients). */
  readonly modules: {
    readonly tenancy: GrpcModule;
    readonly catalog: CatalogModule;
    readonly links: LinksModule;
    readonly rendering: GrpcModule & { readonly renderer: Renderer };
  };
  /** The internal credentials the services accept. */
  readonly credentials: InternalCredentials;
  /** Where the short links' scans wait to be stored. */
  readonly recorder: RedirectRecorder;
  /** Another edge in front of the same services, as a further replica behind a load balancer. */
  edgeReplica(options?: { idempotencyWaitMs?: number | undefined }): RequestListener;
  /** Turns /readyz to 503, so load balancers stop sending requests before connections drain. */
  drain(): void;
  /**
   * Call once the HTTP and gRPC ports stopped taking requests: stores the scans still buffered and
   * stops the workers and the renderer. The database, readiness and quotas stay the caller's to close.
   */
  close(): Promise<void>;
}

/**
 * The whole platform in one process: the four services wired through in-process transports (the same
 * handlers, clients and interceptors as the separate processes), the REST edge and the redirector.
 * The one place that says how the in-process platform is put together; `npm start` and the tests'
 * in-process stack both build it here.
 */
export async function composePlatform(ports: PlatformPorts, options: CompositionOptions): Promise<ComposedPlatform> {
  const { database, readiness, secrets, logger } = ports;
  const metrics = ports.metrics ?? noMetrics;
  const credentials: InternalCredentials = { serviceToken: secrets.serviceToken, adminToken: secrets.adminToken };
  const local = (modules: GrpcModule[]): Transport =>
    inProcessTransport({ modules, credentials, logger, token: credentials.serviceToken, readiness, metrics });
  // Started during an outage, each service waits for the database instead of the process exiting.
  const whenMigrated = <T>(build: () => Promise<T>) => whenDatabaseAnswers(build, { logger, what: "migrating" });

  // One process: tenancy's announcements of revoked keys and changed accounts reach the edge in memory.
  const accessChanges = memoryAccessChanges(logger);
  const tenancy = await whenMigrated(() =>
    buildTenancy({ db: database.db, pageTokenSecret: secrets.pageTokenSecret, accessChanges }),
  );
  // One process: changes to links reach the redirector's cache in memory, and stored scans the catalog's.
  const invalidations = memoryInvalidationBus(logger);
  const scanChanges = memoryScanChanges(logger);
  const links = await whenMigrated(() =>
    buildLinks({
      db: database.db,
      pageTokenSecret: secrets.pageTokenSecret,
      shortLinkBaseUrl: options.shortLinkBaseUrl,
      customDomainScheme: options.customDomainScheme,
      lookupTxt: ports.lookupTxt,
      invalidations,
      scanChanges,
      now: ports.now,
      metrics,
      ...(options.scanRetentionDays === undefined ? {} : { scanRetentionDays: options.scanRetentionDays }),
      onPartitionError: (error) =>
        logger.error({ err: error }, "making or dropping scan partitions failed; tried again within the hour"),
      onExpiryError: (error) =>
        logger.error({ err: error }, "announcing expired links failed; tried again at the next pass"),
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
      now: ports.now,
    }),
  );
  const workers = options.workers ?? { reconciler: true, webhooks: true };
  if (workers.reconciler) catalog.reconciler.start();
  if (workers.webhooks) catalog.webhooks.start();

  const redirectPath = await startRedirectPath({
    transport: local([links]),
    storeScans: links.storeCheckedScans,
    recordingThread: options.scanRecordingThread ? recordingThreadStorage(links, database) : undefined,
    invalidations,
    reserveScan: links.reserveScan,
    visitorKeySecret: secrets.visitorKeySecret,
    trustedProxies: options.trustedProxies,
    countryHeader: options.countryHeader,
    spoolDir: options.scanSpoolDir,
    logger,
    metrics,
  });
  let draining = false;
  const edge = (fallback: RequestListener | undefined, idempotencyWaitMs?: number) =>
    buildEdge({
      transports: {
        tenancy: local([tenancy]),
        catalog: local([catalog]),
        links: local([links]),
        rendering: local([rendering]),
      },
      logger,
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      isDraining: () => draining,
      fallback,
      metrics,
      quotas: ports.quotas,
      accessChanges,
      idempotency: { inFlightWaitMs: idempotencyWaitMs },
      consoleDir: options.consoleDir,
      shortLinkBaseUrl: options.shortLinkBaseUrl,
    });
  const api = edge(redirectPath.handler);
  // Short links go straight to the redirector, as on the links process: a scan is the hottest
  // request there is, and the edge's middleware (access log, request metrics) does nothing for it.
  const shortLinks = redirectPath.handler;

  return {
    listener: (req, res) => (isEdgeUrl(req.url ?? "/") ? api(req, res) : shortLinks(req, res)),
    modules: { tenancy, catalog, links, rendering },
    credentials,
    recorder: redirectPath.recorder,
    edgeReplica: (replica = {}) => edge(undefined, replica.idempotencyWaitMs),
    drain() {
      draining = true;
    },
    async close() {
      // Every redirect has been answered; its scan is stored before the caller closes the database.
      await redirectPath.close();
      await links.close();
      await catalog.reconciler.stop();
      await catalog.webhooks.stop();
      await rendering.renderer.close();
    },
  };
}
