import { invalidatedCache, type Keeping } from "@qrplatform/platform";
import { parseRequestHost } from "./hosts.js";
import type { InvalidationBus, LinkChange } from "./invalidations.js";
import type { RedirectTarget, ResolveLink } from "./redirector.js";

/** How long answers are kept; every duration in milliseconds. */
export interface RedirectCacheOptions {
  /** How many host-and-slug answers are kept, least recently used dropped first (default 100,000). */
  maxEntries?: number;
  /** How long a link is kept while invalidations arrive: a safety net, as every change is announced (default 60 s). */
  ttlMs?: number;
  /** How long "no such link" is kept, so floods of unknown slugs spare the database; a new link works after at most this long (default 1 s). */
  missTtlMs?: number;
  /** The most an answer may age while the bus is disconnected and changes may go unheard (default 1 s). */
  unconfirmedTtlMs?: number;
  /** A monotonic clock in milliseconds; tests replace it. */
  now?: () => number;
}

/** Where in a found link's time to live it is looked up again ahead of expiry: a moment between these fractions. */
const REFRESH_FROM = 0.7;
const REFRESH_TO = 0.95;

/** A caching {@link ResolveLink}, and how to stop it listening. */
export interface CachedResolver {
  readonly resolve: ResolveLink;
  /** How many answers are kept right now. */
  readonly size: number;
  /** Stops listening to the bus and forgets everything. */
  close(): void;
}

/**
 * Keeps the redirector's answers in memory so a warm link costs no database round trip. Answers are
 * keyed by the request's Host header and slug, both lower-cased, and dropped as soon as the
 * bus announces a change to their link or their custom domain. While the bus is disconnected no
 * answer older than `unconfirmedTtlMs` is served, so a change takes effect within a second either way.
 *
 * Concurrent lookups of one key share a single call to `resolve`. Errors are never kept. Any change
 * heard while a lookup is in flight keeps that lookup's answer out of the cache (it may predate the
 * change), and later requests do not join it. The mechanics are the platform's {@link invalidatedCache}.
 *
 * When a lookup fails (the database is away) and the link's expired answer is still kept, that answer
 * is served, as long as the bus is connected: every change is announced and none was, so it is still
 * right. Links scanned during a database outage keep redirecting however long it lasts.
 */
export function cachedResolver(
  resolve: ResolveLink,
  bus: InvalidationBus,
  options: RedirectCacheOptions = {},
): CachedResolver {
  const ttlMs = options.ttlMs ?? 60_000;
  const missTtlMs = options.missTtlMs ?? 1000;
  const cache = invalidatedCache<RedirectTarget | undefined, LinkChange>({
    bus,
    dropped: (change) => ({
      link: change.linkIds ?? [],
      host: (change.hostnames ?? []).map((hostname) => hostname.toLowerCase()),
    }),
    maxEntries: options.maxEntries ?? 100_000,
    unconfirmedTtlMs: options.unconfirmedTtlMs ?? 1000,
    now: options.now ?? (() => performance.now()),
  });
  // The outage rule: a link that was found keeps redirecting; "no such link" is asked again.
  const servedOnFailure = (kept: RedirectTarget | undefined) => kept !== undefined;

  const cached: ResolveLink = (host, slug) => {
    // Parsed only to keep an answer, so a warm hit costs no parsing. Not a host anything is served
    // on: nothing is worth keeping (and resolving it costs no query).
    const keep = (target: RedirectTarget | undefined, fetchedAt: number): Keeping | undefined => {
      const parsed = parseRequestHost(host);
      return (
        parsed && {
          expiresAt: fetchedAt + (target ? ttlMs : missTtlMs),
          // A link still scanned is looked up again in the background before it expires, at a moment
          // drawn for each: links cached together (a burst of scans, a restart) would otherwise expire
          // together, and their scans would all wait for lookups that hold the event loop meanwhile.
          ...(target && {
            refreshAt: fetchedAt + ttlMs * (REFRESH_FROM + Math.random() * (REFRESH_TO - REFRESH_FROM)),
          }),
          tags: { host: [parsed.hostname], link: target ? [target.linkId] : [] },
        }
      );
    };
    // Keyed by the Host header as sent; spellings of one host that differ (a trailing dot, an
    // explicit port) are merely kept apart.
    return cache.get(`${host.toLowerCase()} ${slug.toLowerCase()}`, () => resolve(host, slug), keep, servedOnFailure);
  };

  return {
    resolve: cached,
    get size() {
      return cache.size;
    },
    close: () => cache.close(),
  };
}
