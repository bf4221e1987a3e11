// The links service as its own process: gRPC on GRPC_PORT, and the public redirector on REDIRECT_PORT.
// Configuration: see docs/configuration.md.
import { join } from "node:path";
import { z } from "zod";
import { databaseEnv, databaseReadiness, openDatabase, whenDatabaseAnswers } from "@qrplatform/db";
import {
  inProcessTransport,
  lateHandler,
  listenHttp,
  memoryScanChanges,
  optionalVar,
  portVar,
  redisScanChanges,
  runGrpcService,
  secretVar,
} from "@qrplatform/platform";
import {
  buildLinks,
  SCAN_RETENTION_DAYS,
  memoryInvalidationBus,
  memoryPasswordGuesses,
  redirectsUnavailable,
  recordingThreadStorage,
  redirectPathEnv,
  redisInvalidationBus,
  redisPasswordGuesses,
  resolverTxtLookup,
  startRedirectPath,
} from "./server.js";

await runGrpcService({
  service: "links",
  env: databaseEnv.merge(redirectPathEnv).extend({
    PAGE_TOKEN_SECRET: secretVar(),
    SHORT_LINK_BASE_URL: z.string().url(),
    CUSTOM_DOMAIN_SCHEME: z.enum(["https", "http"]).default("https"),
    DNS_RESOLVER: optionalVar(z.string()),
    REDIRECT_HOST: z.string().default("0.0.0.0"),
    REDIRECT_PORT: portVar(8081),
    REDIS_URL: optionalVar(z.string().url()),
    VISITOR_KEY_SECRET: secretVar(),
    SCAN_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(SCAN_RETENTION_DAYS),
  }),
  async start(config, logger, metrics, stopping) {
    // The redirector's port first, beside the gRPC port: a busy one is reported at once, and while the
    // service starts (waiting out a database outage, say) redirects get a clear 503, not a refusal.
    const redirects = lateHandler(redirectsUnavailable);
    const redirector = await listenHttp({
      handler: redirects.listener,
      host: config.REDIRECT_HOST,
      port: config.REDIRECT_PORT,
      portVariable: "REDIRECT_PORT",
      logger,
      name: "redirector",
    });
    // PGlite on a thread of its own: statements never hold up redirects, and the recording thread reaches it too.
    const database = await openDatabase({
      databaseUrl: config.DATABASE_URL,
      dataDir: join(config.DATA_DIR, "links"),
      pgliteThread: true,
    });
    // Without Redis an instance hears only its own changes; that is only right for a single instance.
    const invalidations = config.REDIS_URL
      ? await redisInvalidationBus(config.REDIS_URL, logger)
      : memoryInvalidationBus(logger);
    if (!config.REDIS_URL) logger.warn("REDIS_URL is not set: other links instances do not hear this one's changes");
    // Catalogs keep scan totals only while they hear these; without Redis none does, and nothing is lost.
    const scanChanges = config.REDIS_URL ? await redisScanChanges(config.REDIS_URL, logger) : memoryScanChanges(logger);
    const lookupTxt = resolverTxtLookup({ server: config.DNS_RESOLVER });
    // Wrong guesses at protected codes are counted across redirectors where they share a Redis.
    const passwordGuesses = config.REDIS_URL
      ? await redisPasswordGuesses(config.REDIS_URL, logger)
      : memoryPasswordGuesses();
    const build = () =>
      buildLinks({
        db: database.db,
        shortLinkBaseUrl: config.SHORT_LINK_BASE_URL,
        customDomainScheme: config.CUSTOM_DOMAIN_SCHEME,
        lookupTxt,
        pageTokenSecret: config.PAGE_TOKEN_SECRET,
        invalidations,
        scanChanges,
        scanRetentionDays: config.SCAN_RETENTION_DAYS,
        metrics,
        onExpiryError: (error) =>
          logger.error({ err: error }, "announcing expired links failed; tried again at the next pass"),
        onPartitionError: (error) =>
          logger.error({ err: error }, "making or dropping scan partitions failed; tried again within the hour"),
      });
    // Started during an outage, the process waits for the database (alive, not ready) instead of exiting.
    const links = await whenDatabaseAnswers(build, { logger, what: "migrating", signal: stopping });
    const readiness = databaseReadiness(database, { logger, metrics });
    // The redirector calls this process's own RedirectService through the same interceptors as gRPC,
    // keeps the answers until a change is announced, and records scans in batches. While the database
    // is away it keeps answering from its cache, and scans wait in the spool.
    const credentials = { serviceToken: config.SERVICE_TOKEN, adminToken: config.ADMIN_TOKEN };
    const redirectPath = await startRedirectPath({
      transport: inProcessTransport({
        modules: [links],
        credentials,
        logger,
        token: config.SERVICE_TOKEN,
        readiness,
        metrics,
      }),
      storeScans: links.storeCheckedScans,
      // By default a thread of its own classifies and stores scans, off the thread that answers.
      recordingThread: config.SCAN_RECORDING_THREAD === "true" ? recordingThreadStorage(links, database) : undefined,
      invalidations,
      reserveScan: links.reserveScan,
      passwordGuesses,
      visitorKeySecret: config.VISITOR_KEY_SECRET,
      trustedProxies: config.TRUSTED_PROXIES,
      countryHeader: config.COUNTRY_HEADER,
      spoolDir: config.SCAN_SPOOL_DIR ?? join(config.DATA_DIR, "scan-spool"),
      logger,
      metrics,
    });
    redirects.set(redirectPath.handler);
    return {
      modules: [links],
      readiness,
      // Runs after the gRPC server has drained: finish redirects in flight, store their scans, then
      // close the database.
      async close() {
        await redirector.close();
        await redirectPath.close();
        await links.close();
        await invalidations.close();
        await scanChanges.close();
        await passwordGuesses.close();
        await database.close();
      },
    };
  },
});
