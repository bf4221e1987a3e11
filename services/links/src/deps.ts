import type { Kysely } from "kysely";
import type { PageTokens, ScanChangeBus } from "@qrplatform/platform";
import type { LookupTxt } from "./domains/dns-lookup.js";
import type { RequestHost } from "./redirects/hosts.js";
import type { InvalidationBus } from "./redirects/invalidations.js";
import type { DeltaFolder } from "./scans/analytics/delta-folder.js";
import type { ScanSink } from "./scans/scan-sink.js";
import type { LinksTables } from "./tables.js";

/** How a link's absolute URLs are spelled. */
export interface LinkUrls {
  /** The link on the default short domain. */
  canonical(slug: string): string;
  /** The link on a custom domain. */
  vanity(hostname: string, vanitySlug: string): string;
}

/** What the links service's handlers need; built once by server.ts. */
export interface LinksDeps {
  readonly db: Kysely<LinksTables>;
  readonly pageTokens: PageTokens;
  readonly urls: LinkUrls;
  /** Whether a request's Host is the default short domain. */
  readonly isShortDomain: (host: RequestHost) => boolean;
  /** The hostname of the default short domain (canonical), which no account may register as its own. */
  readonly shortDomainHostname: string;
  readonly lookupTxt: LookupTxt;
  /** A new random slug; tests replace it to force collisions. */
  readonly generateSlug: () => string;
  /** The current time; replaceable so tests control it. */
  readonly now: () => Date;
  /** Where changes to links and custom domains are announced, so every redirector drops what it cached. */
  readonly invalidations: InvalidationBus;
  /** Where stored scans are announced, so every catalog drops the scan totals it kept of their links. */
  readonly scanChanges: ScanChangeBus;
  /** Where batches of scans are stored (ScanWriter: one statement at a time per instance). */
  readonly scanSink: ScanSink;
  /** Moves what stored batches added to the rollups into them, soon after. */
  readonly scanDeltas: DeltaFolder;
  /**
   * Up to how many visitor-days (the sum of a range's daily distinct visitors) analytics counts a
   * range's distinct visitors exactly; past it, from HyperLogLog sketches.
   */
  readonly exactVisitorDays: number;
}
