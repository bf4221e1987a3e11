import { LRUCache } from "lru-cache";
import type { ChangeBus, ChangeEvent } from "./change-bus.js";

/**
 * What an entry is filed under, so an announced change finds it: an index name (such as "account")
 * and the ids under it (`{ account: ["…"], apiKey: ["…"] }`).
 */
export type CacheTags = Readonly<Record<string, readonly string[]>>;

/** How a loaded value is kept: until when, and under which tags. */
export interface Keeping {
  /** When the entry stops being served, on the cache's clock. */
  expiresAt: number;
  /**
   * When a read of the entry, still answered from it, also loads it again in the background, so a
   * value read often is replaced before it expires instead of making a reader wait for the load
   * (before `expiresAt`; never, when absent).
   */
  refreshAt?: number;
  /** What changes drop it. */
  tags: CacheTags;
}

/** What an {@link InvalidatedCache} is built from. */
export interface InvalidatedCacheOptions<T> {
  /** Where changes are announced; while it is disconnected, entries are served for `unconfirmedTtlMs` only. */
  bus: Pick<ChangeBus<T>, "subscribe" | "connected">;
  /** The tags an announced change drops. */
  dropped(change: T): CacheTags;
  /** How many entries are kept, least recently used dropped first. */
  maxEntries: number;
  /** The most an entry may age while the bus is disconnected and changes may go unheard (default 1 s). */
  unconfirmedTtlMs?: number;
  /** The cache's clock in milliseconds (entries' expiry and age are on it); tests replace it. */
  now?: () => number;
}

/**
 * A cache kept right by announcements ({@link ChangeBus}), for what is read far more often than it
 * changes: the edge's authenticated keys, the redirector's links.
 *
 * - **Invalidation by index**: every entry is filed under tags; an announced change drops every entry
 *   under its tags at once, and "everything" (heard after a resubscription, when changes may have been
 *   missed) drops everything.
 * - **Single flight**: concurrent loads of one key share one call.
 * - **No answer older than a change**: a change heard while a load is in flight keeps that load's answer
 *   out of the cache (it may predate the change), and later callers do not join it.
 * - **Bounded staleness**: while the bus is disconnected no entry older than `unconfirmedTtlMs` is
 *   served, so a change takes effect within that bound either way.
 * - Errors are never kept.
 */
export interface InvalidatedCache<V> {
  /**
   * The value kept for `key`, or what `load` answers (then kept as `keep` says; `undefined` keeps
   * nothing). With `servedOnFailure`, a failed load answers the key's expired entry instead of the
   * error when that predicate allows it and the bus is connected: every change is announced and none
   * was, so the entry is still right (the redirector's rule while its database is away).
   */
  get(
    key: string,
    load: () => Promise<V>,
    keep: (value: V, fetchedAt: number) => Keeping | undefined,
    servedOnFailure?: (kept: V) => boolean,
  ): Promise<V>;
  /** How many entries are kept right now. */
  readonly size: number;
  /** Stops listening to the bus and forgets everything. */
  close(): void;
}

interface Entry<V> {
  value: V;
  tags: CacheTags;
  /** When the load that produced this value started: the value is no newer than that. */
  fetchedAt: number;
  expiresAt: number;
  refreshAt: number;
}

/** Builds an {@link InvalidatedCache} listening to `options.bus`. */
export function invalidatedCache<V, T>(options: InvalidatedCacheOptions<T>): InvalidatedCache<V> {
  const { bus } = options;
  const unconfirmedTtlMs = options.unconfirmedTtlMs ?? 1000;
  const now = options.now ?? (() => performance.now());

  // Index name -> id -> the keys filed under it.
  const indexes = new Map<string, Map<string, Set<string>>>();
  const file = (tags: CacheTags, key: string, add: boolean) => {
    for (const [name, ids] of Object.entries(tags)) {
      let index = indexes.get(name);
      if (!index) {
        index = new Map();
        indexes.set(name, index);
      }
      for (const id of ids) {
        const keys = index.get(id);
        if (add) {
          if (keys) keys.add(key);
          else index.set(id, new Set([key]));
        } else if (keys?.delete(key) && keys.size === 0) index.delete(id);
      }
    }
  };
  const entries = new LRUCache<string, Entry<V>>({
    max: options.maxEntries,
    // Every way out (eviction, replacement, deletion, clear) unfiles the entry.
    dispose: (entry, key) => file(entry.tags, key, false),
  });
  const inFlight = new Map<string, Promise<V>>();
  // Bumped by every change heard: a load started under an older epoch may have read what changed.
  let epoch = 0;

  const unsubscribe = bus.subscribe((event: ChangeEvent<T>) => {
    epoch++;
    inFlight.clear();
    if (event === "everything") {
      entries.clear();
      return;
    }
    for (const [name, ids] of Object.entries(options.dropped(event))) {
      const index = indexes.get(name);
      for (const id of ids) for (const key of [...(index?.get(id) ?? [])]) entries.delete(key);
    }
  });

  const get: InvalidatedCache<V>["get"] = (key, load, keep, servedOnFailure) => {
    const startedAt = now();
    const entry = entries.get(key);
    if (entry && startedAt < entry.expiresAt && (bus.connected || startedAt - entry.fetchedAt < unconfirmedTtlMs)) {
      // A failed refresh changes nothing: the entry is served until it expires, and a reader then loads.
      if (startedAt >= entry.refreshAt && !inFlight.has(key))
        startLoad(key, load, keep, servedOnFailure, entry, startedAt).catch(() => undefined);
      return Promise.resolve(entry.value);
    }
    const pending = inFlight.get(key);
    if (pending) return pending;
    return startLoad(key, load, keep, servedOnFailure, entry, startedAt);
  };

  const startLoad = (
    key: string,
    load: () => Promise<V>,
    keep: (value: V, fetchedAt: number) => Keeping | undefined,
    servedOnFailure: ((kept: V) => boolean) | undefined,
    entry: Entry<V> | undefined,
    startedAt: number,
  ): Promise<V> => {
    const startedIn = epoch;
    const loading = load().then(
      (value) => {
        const keeping = epoch === startedIn ? keep(value, startedAt) : undefined;
        if (keeping) {
          entries.set(key, {
            value,
            tags: keeping.tags,
            fetchedAt: startedAt,
            expiresAt: keeping.expiresAt,
            refreshAt: keeping.refreshAt ?? Number.POSITIVE_INFINITY,
          });
          file(keeping.tags, key, true);
        }
        return value;
      },
      (error: unknown) => {
        // A change since would have removed the entry; while the bus is down one may have gone unheard.
        if (entry && servedOnFailure?.(entry.value) && bus.connected && entries.peek(key) === entry) return entry.value;
        throw error;
      },
    );
    inFlight.set(key, loading);
    const settle = () => {
      if (inFlight.get(key) === loading) inFlight.delete(key);
    };
    loading.then(settle, settle);
    return loading;
  };

  return {
    get,
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
