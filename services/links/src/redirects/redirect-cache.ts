import { LRUCache } from "lru-cache";
import { parseRequestHost } from "./hosts.js";
import type { InvalidationBus, InvalidationEvent } from "./invalidations.js";
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

/** A caching {@link ResolveLink}, and how to stop it listening. */
export interface CachedResolver {
  readonly resolve: ResolveLink;
  /** How many answers are kept right now. */
  readonly size: number;
  /** Stops listening to the bus and forgets everything. */
  close(): void;
}

interface Entry {
  target: RedirectTarget | undefined;
  hostname: string;
  /** When the lookup that produced this answer started: the answer is no newer than that. */
  fetchedAt: number;
  expiresAt: number;
}

/**
 * Keeps the redirector's answers in memory so a warm link costs no database round trip. Answers are
 * keyed by the request's Host header and slug, both lower-cased, and dropped as soon as the
 * bus announces a change to their link or their custom domain. While the bus is disconnected no
 * answer older than `unconfirmedTtlMs` is served, so a change takes effect within a second either way.
 *
 * Concurrent lookups of one key share a single call to `resolve`. Errors are never kept. Any change
 * heard while a lookup is in flight keeps that lookup's answer out of the cache (it may predate the
 * change), and later requests do not join it.
 *
 * When a lookup fails (the database is away) and the link's expired answer is still kept, that answer
 * is served, as long as the bus is connected: every change is announced and none was, so it is still
 * right. Links scanned during a database outage keep redirecting however long it lasts.
 */
export function cachedResolver(resolve: ResolveLink, bus: InvalidationBus, options: RedirectCacheOptions = {}): CachedResolver {
  const ttlMs = options.ttlMs ?? 60_000;
  const missTtlMs = options.missTtlMs ?? 1000;
  const unconfirmedTtlMs = options.unconfirmedTtlMs ?? 1000;
  const now = options.now ?? (() => performance.now());

  const byLink = new Map<string, Set<string>>();
  const byHost = new Map<string, Set<string>>();
  const index = (map: Map<string, Set<string>>, name: string, key: string) => {
    let keys = map.get(name);
    if (!keys) map.set(name, (keys = new Set()));
    keys.add(key);
  };
  const unindex = (map: Map<string, Set<string>>, name: string, key: string) => {
    const keys = map.get(name);
    if (keys?.delete(key) && keys.size === 0) map.delete(name);
  };
  const entries = new LRUCache<string, Entry>({
    max: options.maxEntries ?? 100_000,
    dispose: (entry, key) => {
      unindex(byHost, entry.hostname, key);
      if (entry.target) unindex(byLink, entry.target.linkId, key);
    },
  });
  const inFlight = new Map<string, Promise<RedirectTarget | undefined>>();
  // Bumped by every change heard: a lookup started under an older epoch may have read what changed.
  let epoch = 0;

  const drop = (keys: Set<string> | undefined) => {
    for (const key of [...(keys ?? [])]) entries.delete(key);
  };
  const unsubscribe = bus.subscribe((event: InvalidationEvent) => {
    epoch++;
    inFlight.clear();
    if (event === "everything") {
      // Each entry's dispose empties the indexes as it goes.
      entries.clear();
      return;
    }
    for (const linkId of event.linkIds ?? []) drop(byLink.get(linkId));
    for (const hostname of event.hostnames ?? []) drop(byHost.get(hostname.toLowerCase()));
  });

  const cached: ResolveLink = (host, slug) => {
    // Keyed by the Host header as sent: a warm hit costs no parsing. Spellings of one host that
    // differ (a trailing dot, an explicit port) are merely kept apart.
    const key = `${host.toLowerCase()} ${slug.toLowerCase()}`;
    const startedAt = now();
    const entry = entries.get(key);
    if (entry && startedAt < entry.expiresAt && (bus.connected || startedAt - entry.fetchedAt < unconfirmedTtlMs)) {
      return Promise.resolve(entry.target);
    }
    const pending = inFlight.get(key);
    if (pending) return pending;
    const parsed = parseRequestHost(host);
    // Not a host anything is served on: nothing worth keeping, and resolving it costs no query.
    if (!parsed) return resolve(host, slug);

    const startedIn = epoch;
    const lookup = resolve(host, slug).then(
      (target) => {
        if (epoch === startedIn) {
          const expiresAt = startedAt + (target ? ttlMs : missTtlMs);
          entries.set(key, { target, hostname: parsed.hostname, fetchedAt: startedAt, expiresAt });
          index(byHost, parsed.hostname, key);
          if (target) index(byLink, target.linkId, key);
        }
        return target;
      },
      (error: unknown) => {
        // A change since would have removed the entry; while the bus is down one may have gone unheard.
        if (entry?.target && bus.connected && entries.peek(key) === entry) return entry.target;
        throw error;
      },
    );
    inFlight.set(key, lookup);
    const settle = () => {
      if (inFlight.get(key) === lookup) inFlight.delete(key);
    };
    lookup.then(settle, settle);
    return lookup;
  };

  return {
    resolve: cached,
    get size() {
      return entries.size;
    },
    close() {
      unsubscribe();
      epoch++;
      inFlight.clear();
      entries.clear();
    },
  };
}
