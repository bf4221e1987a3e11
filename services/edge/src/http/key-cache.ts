import { createHash } from "node:crypto";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { LRUCache } from "lru-cache";
import type { AuthenticateApiKeyResponse } from "@qrplatform/api/tenancy";
import type { AccessChange, AccessChangeBus, ChangeEvent } from "@qrplatform/platform";

/** Who a bearer secret is: tenancy's answer (key, account, plan, API access), or a ConnectError for a refused key. */
export type AuthenticateKey = (secret: string) => Promise<AuthenticateApiKeyResponse>;

/** How long authenticated keys are kept; every duration in milliseconds. */
export interface KeyCacheOptions {
  /** How many keys are kept, least recently used dropped first (default 10,000). */
  maxEntries?: number;
  /** How long a key is kept while announcements arrive: a safety net, as every change is announced (default 60 s). */
  ttlMs?: number;
  /** The most an answer may age while the bus is disconnected and changes may go unheard (default 1 s). */
  unconfirmedTtlMs?: number;
  /** The wall clock in milliseconds (keys expire at a wall-clock time); tests replace it. */
  now?: () => number;
}

/** A caching {@link AuthenticateKey}, and how to stop it listening. */
export interface KeyCache {
  readonly authenticate: AuthenticateKey;
  /** How many keys are kept right now. */
  readonly size: number;
  /** Stops listening to the bus and forgets everything. */
  close(): void;
}

interface Entry {
  found: AuthenticateApiKeyResponse;
  apiKeyId: string;
  accountId: string;
  /** When the lookup that produced this answer started: the answer is no newer than that. */
  fetchedAt: number;
  /** The safety-net expiry, or the key's own expiry when that comes first. */
  expiresAt: number;
}

/**
 * Keeps tenancy's answers for authenticated keys in memory, so a warm key costs no round trip. Keys
 * are held by the SHA-256 of their secret (never the secret itself) and dropped as soon as tenancy
 * announces that the key was revoked or its account changed (plan, status, add-ons, hourly limit); a
 * key whose expiry passes is asked about again, and tenancy refuses it. While the bus is disconnected
 * no answer older than `unconfirmedTtlMs` is used, so a change takes effect within a second either way.
 *
 * Refusals are never kept: an unknown, revoked or expired key asks tenancy every time, and the 401 it
 * gets is tenancy's own. Concurrent lookups of one key share a call. Any change heard while a lookup is
 * in flight keeps that lookup's answer out of the cache (it may predate the change).
 */
export function cachedKeys(ask: AuthenticateKey, bus: AccessChangeBus, options: KeyCacheOptions = {}): KeyCache {
  const ttlMs = options.ttlMs ?? 60_000;
  const unconfirmedTtlMs = options.unconfirmedTtlMs ?? 1000;
  const now = options.now ?? Date.now;

  const byKeyId = new Map<string, Set<string>>();
  const byAccount = new Map<string, Set<string>>();
  const index = (map: Map<string, Set<string>>, id: string, hash: string) => {
    let hashes = map.get(id);
    if (!hashes) map.set(id, (hashes = new Set()));
    hashes.add(hash);
  };
  const unindex = (map: Map<string, Set<string>>, id: string, hash: string) => {
    const hashes = map.get(id);
    if (hashes?.delete(hash) && hashes.size === 0) map.delete(id);
  };
  const entries = new LRUCache<string, Entry>({
    max: options.maxEntries ?? 10_000,
    dispose: (entry, hash) => {
      unindex(byKeyId, entry.apiKeyId, hash);
      unindex(byAccount, entry.accountId, hash);
    },
  });
  const inFlight = new Map<string, Promise<AuthenticateApiKeyResponse>>();
  // Bumped by every change heard: a lookup started under an older epoch may have read what changed.
  let epoch = 0;

  const drop = (hashes: Set<string> | undefined) => {
    for (const hash of [...(hashes ?? [])]) entries.delete(hash);
  };
  const unsubscribe = bus.subscribe((event: ChangeEvent<AccessChange>) => {
    epoch++;
    inFlight.clear();
    if (event === "everything") {
      entries.clear();
      return;
    }
    for (const id of event.apiKeyIds ?? []) drop(byKeyId.get(id));
    for (const id of event.accountIds ?? []) drop(byAccount.get(id));
  });

  const authenticate: AuthenticateKey = (secret) => {
    const hash = createHash("sha256").update(secret).digest("base64url");
    const startedAt = now();
    const entry = entries.get(hash);
    if (entry && startedAt < entry.expiresAt && (bus.connected || startedAt - entry.fetchedAt < unconfirmedTtlMs)) {
      return Promise.resolve(entry.found);
    }
    const pending = inFlight.get(hash);
    if (pending) return pending;

    const startedIn = epoch;
    const lookup = ask(secret).then((found) => {
      if (epoch === startedIn && found.apiKey && found.account) {
        const keyExpiry = found.apiKey.expireTime ? timestampMs(found.apiKey.expireTime) : Infinity;
        const expiresAt = Math.min(startedAt + ttlMs, keyExpiry);
        entries.set(hash, { found, apiKeyId: found.apiKey.id, accountId: found.account.id, fetchedAt: startedAt, expiresAt });
        index(byKeyId, found.apiKey.id, hash);
        index(byAccount, found.account.id, hash);
      }
      return found;
    });
    inFlight.set(hash, lookup);
    const settle = () => {
      if (inFlight.get(hash) === lookup) inFlight.delete(hash);
    };
    lookup.then(settle, settle);
    return lookup;
  };

  return {
    authenticate,
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
