import type { Kysely } from "kysely";
import { AnalyticsService, DomainService, LinkService, OutboxService, RedirectService } from "@qrplatform/api/links";
import { migrateSchema, type SharedKysely } from "@qrplatform/db";
import {
  ConfigError,
  memoryScanChanges,
  type Metrics,
  noMetrics,
  PageTokens,
  PeriodicPass,
  type GrpcModule,
  type ScanChangeBus,
} from "@qrplatform/platform";
import { migrations, SCHEMA } from "../migrations/index.js";
import type { LinksDeps } from "./deps.js";
import { classifiedTxtLookup, resolverTxtLookup, type TxtRecordsLookup } from "./domains/dns-lookup.js";
import { canonicalHostname } from "./domains/hostname.js";
import { generateSlug } from "./links/slugs.js";
import { shortDomainMatcher } from "./redirects/hosts.js";
import { memoryInvalidationBus, type InvalidationBus } from "./redirects/invalidations.js";
import { registerRoutes } from "./routes.js";
import { DeltaFolder } from "./scans/analytics/delta-folder.js";
import type { ScanColumns } from "./scans/scan-columns.js";
import { ScanWriter } from "./scans/analytics/scan-writer.js";
import type { ScanSink } from "./scans/scan-sink.js";
import { announceStoredScans, storeCheckedScans } from "./scans/analytics/scans.handlers.js";
import { ScanPartitionManager } from "./scans/analytics/scan-partitions.js";
import { scansDroppedCounter } from "./scans/recording/scan-recorder.js";
import { reserveScan } from "./redirects/scan-reservations.repository.js";
import { recordExpiredLinks } from "./outbox/outbox.repository.js";
import type { LinksTables } from "./tables.js";

export { buildRedirector, redirectsUnavailable, resolveVia, type RedirectTarget } from "./redirects/redirector.js";
export { cachedResolver } from "./redirects/redirect-cache.js";
export { memoryInvalidationBus, redisInvalidationBus, type InvalidationBus } from "./redirects/invalidations.js";
export { recordingThreadStorage, redirectPathEnv, startRedirectPath } from "./redirects/redirect-path.js";
export { memoryPasswordGuesses, redisPasswordGuesses } from "./redirects/password-guesses.js";
export type { RedirectRecorder } from "./scans/recording/scan-recorder.js";
export type { ScanSink } from "./scans/scan-sink.js";
export { resolverTxtLookup, type TxtRecordsLookup } from "./domains/dns-lookup.js";

/** What the links service is built from. */
export interface LinksOptions {
  /** The shared database handle; links narrows it to its own schema. */
  db: SharedKysely;
  /**
   * The default short domain, an http(s) origin without a path, such as "https://qr.example" or
   * "http://127.0.0.1:8080": canonical URLs are `${shortLinkBaseUrl}/${slug}`, and requests to its host
   * resolve generated slugs. A trailing slash is ignored.
   */
  shortLinkBaseUrl: string;
  /** The scheme of vanity URLs on custom domains; "https" unless a deployment serves them over plain HTTP. */
  customDomainScheme?: "https" | "http";
  /**
   * Answers the TXT records domain verification asks for: the process's main builds it from its DNS
   * resolver setting (resolverTxtLookup); tests may answer from memory. The system's resolvers when unset.
   */
  lookupTxt?: TxtRecordsLookup;
  /**
   * A DNS server ("ip:port") to build `lookupTxt` from, for callers that do not pass one.
   * @deprecated Pass `lookupTxt: resolverTxtLookup({ server })`; kept while the catalog's tests still pass an address.
   */
  dnsResolver?: string | undefined;
  /** Signs list page tokens. */
  pageTokenSecret: string;
  /** The clock; tests replace it. */
  now?: () => Date;
  /** Makes generated slugs; tests replace it to force collisions. Defaults to the CSPRNG. */
  generateSlug?: () => string;
  /**
   * Where changes to links and custom domains are announced; give the redirectors' caches the same
   * bus. Defaults to one of this process only.
   */
  invalidations?: InvalidationBus;
  /**
   * Where stored scans are announced (their links' totals grew); give the catalogs the same bus.
   * Defaults to one of this process only.
   */
  scanChanges?: ScanChangeBus;
  /** Where batches of scans are stored; a ScanWriter on `db` when unset. */
  scanSink?: ScanSink;
  /** Up to how many visitor-days a range's distinct visitors are counted exactly (see LinksDeps); tests lower it. */
  exactVisitorDays?: number;
  /**
   * Days of raw scans and visitor-days kept before today (SCAN_RETENTION_DAYS, default 90; 0 keeps
   * the least deduplication needs, see scan-partitions.ts); older partitions are dropped.
   */
  scanRetentionDays?: number;
  /** Where the partition manager reports a failed run; it is tried again within the hour. */
  onPartitionError?: (error: unknown) => void;
  /** Where scans the ScanWriter does not store for being outside the raw window are counted (qrp_scans_dropped_total). */
  metrics?: Metrics;
  /** Where a failed pass announcing expired links is reported; it is tried again at the next pass. */
  onExpiryError?: (error: unknown) => void;
}

/** Days of raw scans kept by default. */
export const SCAN_RETENTION_DAYS = 90;

/**
 * Counting a range's distinct visitors exactly reads one row per visitor and day, about a microsecond
 * each: 20,000 of them keep the exact count within about 20 ms. Larger ranges merge day sketches.
 */
const EXACT_VISITOR_DAYS = 20_000;
/** How often expired links are looked for, to announce them. */
const EXPIRY_PASS_MS = 30_000;

/** The origin of a short-link base URL, or a ConfigError saying what is wrong with it. */
function shortLinkOrigin(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`The short link base URL "${value}" is not a URL.`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.username || url.password) {
    throw new ConfigError(`The short link base URL "${value}" must be an http or https URL without credentials.`);
  }
  if (url.pathname !== "/" || url.search || url.hash) {
    throw new ConfigError(
      `The short link base URL "${value}" must be an origin without a path, such as https://qr.example.`,
    );
  }
  return url.origin;
}

/** The links service, and what a redirector in the same process may call without going through gRPC. */
export interface LinksModule extends GrpcModule {
  /**
   * For a scan recorder of this process (on this thread, or on a recording thread where this thread
   * owns the database): stores a batch the recorder built as columns, its scans keeping the scan
   * rules by construction, announces its links and folds soon. The batch skips the protobuf round
   * trip and the checks of RecordScans, which callers from elsewhere use. Answers how many were new.
   */
  storeCheckedScans(scans: ScanColumns): Promise<number>;
  /**
   * For a recording thread of this process that stores scans itself (ScanRecorderThread): announces
   * the links of a stored batch (empty when none of its scans was new) and folds its deltas soon.
   */
  announceStoredScans(linkIds: readonly string[]): Promise<void>;
  /** Stops the partition manager and the expiry pass, after runs in progress; call before closing the database. */
  close(): Promise<void>;
  /**
   * For a redirector of this process: takes one of a link's `maxScans` places for a counted scan
   * before it is let through to a destination, or answers false when every place is taken (ADR 0018).
   */
  reserveScan(linkId: string, maxScans: number): Promise<boolean>;
}

/** Migrates the links schema and returns the service: short links, custom domains, redirects and analytics. */
export async function buildLinks(options: LinksOptions): Promise<LinksModule> {
  const origin = shortLinkOrigin(options.shortLinkBaseUrl);
  const lookupTxt = options.lookupTxt ?? resolverTxtLookup({ server: options.dnsResolver });
  const scheme = options.customDomainScheme ?? "https";
  await migrateSchema(options.db, SCHEMA, migrations);
  const db = options.db.withSchema(SCHEMA) as Kysely<LinksTables>;
  const deps: LinksDeps = {
    db,
    pageTokens: new PageTokens(options.pageTokenSecret),
    urls: {
      canonical: (slug) => `${origin}/${slug}`,
      vanity: (hostname, vanitySlug) => `${scheme}://${hostname}/${vanitySlug}`,
    },
    isShortDomain: shortDomainMatcher(origin),
    shortDomainHostname: canonicalHostname(new URL(origin).hostname),
    lookupTxt: classifiedTxtLookup(lookupTxt),
    generateSlug: options.generateSlug ?? generateSlug,
    now: options.now ?? (() => new Date()),
    invalidations: options.invalidations ?? memoryInvalidationBus(),
    scanChanges: options.scanChanges ?? memoryScanChanges(),
    scanSink:
      options.scanSink ??
      new ScanWriter(db, (scans) =>
        scansDroppedCounter(options.metrics ?? noMetrics).inc({ reason: "expired" }, scans),
      ),
    scanDeltas: new DeltaFolder(db),
    exactVisitorDays: options.exactVisitorDays ?? EXACT_VISITOR_DAYS,
  };
  // Deltas a stopped or killed process left are folded now, not with the next scan: folding is what
  // turns stored scans into qr_code.scanned webhooks.
  deps.scanDeltas.foldSoon();
  // Partitions for today's and the next days' scans exist before the first batch is stored.
  const partitions = new ScanPartitionManager(
    db,
    options.scanRetentionDays ?? SCAN_RETENTION_DAYS,
    deps.now,
    options.onPartitionError,
  );
  await partitions.start();
  // Expiries are announced (link.expired, the qr_code.expired webhook) within a pass of passing, once,
  // by whichever instance gets there first.
  const expiries = new PeriodicPass(
    () => recordExpiredLinks(db, deps.now()),
    EXPIRY_PASS_MS,
    (error) => options.onExpiryError?.(error),
  );
  expiries.start();
  return {
    services: [LinkService, DomainService, RedirectService, AnalyticsService, OutboxService],
    routes: (router) => registerRoutes(router, deps),
    storeCheckedScans: (scans) => storeCheckedScans(deps, scans),
    announceStoredScans: (linkIds) => announceStoredScans(deps, linkIds),
    close: async () => {
      await expiries.stop();
      await partitions.close();
    },
    reserveScan: (linkId, maxScans) => reserveScan(db, linkId, maxScans),
  };
}
