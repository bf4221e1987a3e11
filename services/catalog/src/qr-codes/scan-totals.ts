import type { Client } from "@connectrpc/connect";
import type { AnalyticsService } from "@qrplatform/api/links";
import { invalidatedCache, type Keeping, type ScanChange, type ScanChangeBus } from "@qrplatform/platform";

/** All-time scans of some of an account's links, folded or not, by link id (links without scans: 0n or absent). */
export type ScanTotals = (accountId: string, linkIds: readonly string[]) => Promise<Record<string, bigint>>;

/** The links service's count, one call for all the links asked about. */
export function askedScanTotals(analytics: Client<typeof AnalyticsService>): ScanTotals {
  return async (accountId, linkIds) =>
    linkIds.length === 0 ? {} : (await analytics.getScanTotals({ accountId, linkIds: [...linkIds] })).totals;
}

/** How long scan totals are kept; every duration in milliseconds. */
export interface ScanTotalsCacheOptions {
  /** How many links' totals are kept, least recently used dropped first (default 50,000). */
  maxEntries?: number;
  /** How long a total is kept while announcements arrive: a safety net, as every stored batch is announced (default 60 s). */
  ttlMs?: number;
  /** The most a total may age while the bus is disconnected and announcements may go unheard (default 1 s). */
  unconfirmedTtlMs?: number;
  /** The cache's clock; tests replace it. */
  now?: () => number;
}

/**
 * Keeps links' scan totals in memory, so reading a code or a page of codes does not ask the links
 * service again while no scan of theirs is stored. The links service announces the links of every
 * batch it stores before it answers the batch, and every catalog drops their totals at once, so a read
 * after scans are stored counts them. While the bus is disconnected no total older than
 * `unconfirmedTtlMs` is used. The totals not kept are asked for in one call, whatever their number.
 * The mechanics (single flight, no answer older than an announcement heard while it loaded) are the
 * platform's {@link invalidatedCache}.
 */
export function cachedScanTotals(
  ask: ScanTotals,
  bus: ScanChangeBus,
  options: ScanTotalsCacheOptions = {},
): ScanTotals {
  const ttlMs = options.ttlMs ?? 60_000;
  const cache = invalidatedCache<bigint, ScanChange>({
    bus,
    dropped: (change) => ({ link: change.linkIds }),
    maxEntries: options.maxEntries ?? 50_000,
    unconfirmedTtlMs: options.unconfirmedTtlMs ?? 1000,
    now: options.now,
  });
  return async (accountId, linkIds) => {
    // The cache calls `load` at once for every link it does not keep; the call waits for the last of them.
    const asked: string[] = [];
    let answer: Promise<Record<string, bigint>> | undefined;
    const load = (linkId: string) => () => {
      asked.push(linkId);
      answer ??= Promise.resolve().then(() => ask(accountId, asked));
      return answer.then((totals) => totals[linkId] ?? 0n);
    };
    const keep =
      (linkId: string) =>
      (_total: bigint, fetchedAt: number): Keeping => ({ expiresAt: fetchedAt + ttlMs, tags: { link: [linkId] } });
    // Keyed by account too: a total is only ever the answer to its own account's question.
    const totals = await Promise.all(
      linkIds.map((linkId) => cache.get(`${accountId}/${linkId}`, load(linkId), keep(linkId))),
    );
    return Object.fromEntries(linkIds.map((linkId, i) => [linkId, totals[i]!]));
  };
}
