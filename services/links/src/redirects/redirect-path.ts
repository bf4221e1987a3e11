import type { RequestListener } from "node:http";
import type { Transport } from "@connectrpc/connect";
import { z } from "zod";
import type { Database } from "@qrplatform/db";
import { noMetrics, optionalVar, type Logger, type Metrics } from "@qrplatform/platform";
import { scanClassifier, type ScanFacts, type ClassifiedRequest } from "../scans/recording/classify.js";
import { openCountryDatabase } from "../scans/recording/country.js";
import { onAnsweringThread, onRecordingThread } from "../scans/recording/placement.js";
import { sendVia, type RedirectRecorder, type SendScans } from "../scans/recording/scan-recorder.js";
import type { RecorderThreadStorage } from "../scans/recording/scan-recorder-thread.js";
import type { InvalidationBus } from "./invalidations.js";
import { cachedResolver } from "./redirect-cache.js";
import { memoryPasswordGuesses, type PasswordGuesses } from "./password-guesses.js";
import { buildRedirector, resolveVia } from "./redirector.js";
import { routedRedirects } from "./routed-redirects.js";
import { unlockCookies } from "./unlock-cookie.js";

/**
 * The variables of every process that serves short links: TRUSTED_PROXIES, comma-separated addresses,
 * CIDR ranges or "loopback"/"linklocal"/"uniquelocal", whose X-Forwarded-For is believed (none by
 * default: the socket peer is the visitor); COUNTRY_HEADER, a header such a proxy sets to the
 * visitor's country (such as cf-ipcountry), else the bundled DB-IP Lite database decides;
 * SCAN_SPOOL_DIR, where scans wait on disk while Postgres is away (default DATA_DIR/scan-spool);
 * SCAN_RECORDING_THREAD, whether a process that serves short links classifies and stores scans on a
 * thread of its own ("true", the default) or on the thread that answers ("false", for a process held
 * to one core) (ADR 0014).
 */
export const redirectPathEnv = z.object({
  TRUSTED_PROXIES: z
    .string()
    .default("")
    .transform((list) =>
      list
        .split(",")
        .map((entry) => entry.trim())
        .filter(Boolean),
    ),
  COUNTRY_HEADER: optionalVar(z.string().regex(/^[A-Za-z0-9-]+$/, "must be a header name")),
  SCAN_SPOOL_DIR: optionalVar(z.string()),
  SCAN_RECORDING_THREAD: optionalVar(z.enum(["true", "false"])).transform((value) => value ?? "true"),
});

/** How a process serves short links. */
export interface RedirectPathOptions {
  /** Reaches RedirectService: in-process where the links service runs, or over gRPC. */
  transport: Transport;
  /**
   * Stores batches of scans; RecordScans over `transport` when unset. Where the links service runs in
   * the same process, its LinksModule.storeCheckedScans, which takes the recorder's columns as they are.
   */
  storeScans?: SendScans;
  /**
   * Records scans on a thread of their own (onRecordingThread); the request thread only captures a few
   * fields of each redirect. Where the links service runs in this process (recordingThreadStorage).
   */
  recordingThread?: RecorderThreadStorage | undefined;
  /** The bus the links service announces changes on, so cached answers are dropped. */
  invalidations: InvalidationBus;
  /**
   * Takes a place under a link's scan limit for a counted scan (LinksModule.reserveScan: the links
   * service runs in every process that serves short links).
   */
  reserveScan: (linkId: string, maxScans: number) => Promise<boolean>;
  /**
   * Where wrong guesses at protected codes are counted: Redis where redirectors share one
   * (redisPasswordGuesses), this process's memory by default. The caller closes it.
   */
  passwordGuesses?: PasswordGuesses;
  /**
   * Salts visitor keys, and keys the cookie that remembers a code's password. Keep it stable: a new
   * secret makes every visitor new, and asks every protected code's password again.
   */
  visitorKeySecret: string;
  /** Proxies whose X-Forwarded-For (and country header) is believed; see scanClassifier. */
  trustedProxies?: readonly string[];
  /** A trusted proxy's country header, such as "cf-ipcountry"; the bundled database otherwise. */
  countryHeader?: string | undefined;
  /** Where scans wait on disk while they cannot be stored (and survive a hard kill); in memory when unset. */
  spoolDir?: string | undefined;
  logger: Logger;
  /** Where redirects by outcome and the scans' way to the database are reported. */
  metrics?: Metrics;
}

/**
 * Where the recording thread of a process that runs the links service stores scans: the links
 * service's database, through connections of its own on a Postgres server or a session of its own of
 * PGlite's thread; the links service announces what it stored.
 */
export function recordingThreadStorage(
  links: Pick<RecorderThreadStorage, "announceStoredScans">,
  database: Database,
): RecorderThreadStorage {
  const { connectionForThread } = database;
  if (!connectionForThread)
    throw new Error("recording scans on a thread needs PostgreSQL or PGlite on a thread of its own");
  return { connection: connectionForThread, announceStoredScans: links.announceStoredScans };
}

/** The short-link request listener, and how to stop it without losing a scan. */
export interface RedirectPath {
  readonly handler: RequestListener;
  readonly recorder: RedirectRecorder;
  /** Call after the HTTP server stopped taking requests: stores every buffered scan, then stops caching. */
  close(): Promise<void>;
}

/**
 * The hot path of a scan: the answer comes from the cache when the link is warm, and the scan is
 * recorded off the request path, in batches.
 */
export async function startRedirectPath(options: RedirectPathOptions): Promise<RedirectPath> {
  const { logger } = options;
  const metrics = options.metrics ?? noMetrics;
  const cache = cachedResolver(resolveVia(options.transport), options.invalidations);
  const placement = options.recordingThread
    ? onRecordingThread(options.recordingThread)
    : onAnsweringThread(options.storeScans ?? sendVia(options.transport));
  const recorder = await placement(
    {
      visitorKeySecret: options.visitorKeySecret,
      trustedProxies: options.trustedProxies ?? [],
      countryHeader: options.countryHeader,
      spoolDir: options.spoolDir,
    },
    { logger, metrics },
  );
  // Links with routing classify the request while answering (their rules read it); the country
  // database is opened the first time one is scanned, so a platform without routing never loads it here.
  let classifier: Promise<(req: ClassifiedRequest) => ScanFacts> | undefined;
  const openClassifier = () =>
    (classifier ??= openCountryDatabase().then((countryOf) =>
      scanClassifier({ trustedProxies: options.trustedProxies ?? [], countryHeader: options.countryHeader, countryOf }),
    ));
  const answerRouted = routedRedirects({
    classifier: openClassifier,
    visitorKeySecret: options.visitorKeySecret,
    reserveScan: options.reserveScan,
    cookies: unlockCookies(options.visitorKeySecret),
    guesses: options.passwordGuesses ?? memoryPasswordGuesses(),
    onRedirect: (req, target, facts, route) => recorder.recordRedirect(req, target, facts, route),
    logger,
  });
  return {
    handler: buildRedirector({
      resolve: cache.resolve,
      logger,
      metrics,
      onRedirect: (req, target) => recorder.recordRedirect(req, target),
      answerRouted,
    }),
    recorder,
    async close() {
      await recorder.close();
      cache.close();
    },
  };
}
