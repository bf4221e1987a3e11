import { createHash } from "node:crypto";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { AuthenticateApiKeyResponse } from "@qrplatform/api/tenancy";
import { invalidatedCache, type AccessChange, type AccessChangeBus, type Keeping } from "@qrplatform/platform";

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

/**
 * Keeps tenancy's answers for authenticated keys in memory, so a warm key costs no round trip. Keys
 * are held by the SHA-256 of their secret (never the secret itself) and dropped as soon as tenancy
 * announces that the key was revoked or its account changed (plan, status, add-ons, hourly limit); a
 * key whose expiry passes is asked about again, and tenancy refuses it. While the bus is disconnected
 * no answer older than `unconfirmedTtlMs` is used, so a change takes effect within a second either way.
 *
 * Refusals are never kept: an unknown, revoked or expired key asks tenancy every time, and the 401 it
 * gets is tenancy's own. Concurrent lookups of one key share a call. Any change heard while a lookup is
 * in flight keeps that lookup's answer out of the cache (it may predate the change). The mechanics are
 * the platform's {@link invalidatedCache}.
 */
export function cachedKeys(ask: AuthenticateKey, bus: AccessChangeBus, options: KeyCacheOptions = {}): KeyCache {
  const ttlMs = options.ttlMs ?? 60_000;
  const cache = invalidatedCache<AuthenticateApiKeyResponse, AccessChange>({
    bus,
    dropped: (change) => ({ apiKey: change.apiKeyIds ?? [], account: change.accountIds ?? [] }),
    maxEntries: options.maxEntries ?? 10_000,
    unconfirmedTtlMs: options.unconfirmedTtlMs ?? 1000,
    // Wall-clock time: a key's own expiry is a wall-clock time.
    now: options.now ?? Date.now,
  });
  const keep = (found: AuthenticateApiKeyResponse, fetchedAt: number): Keeping | undefined => {
    if (!found.apiKey || !found.account) return undefined;
    const keyExpiry = found.apiKey.expireTime ? timestampMs(found.apiKey.expireTime) : Infinity;
    return {
      expiresAt: Math.min(fetchedAt + ttlMs, keyExpiry),
      tags: { apiKey: [found.apiKey.id], account: [found.account.id] },
    };
  };

  return {
    authenticate: (secret) =>
      cache.get(createHash("sha256").update(secret).digest("base64url"), () => ask(secret), keep),
    get size() {
      return cache.size;
    },
    close: () => cache.close(),
  };
}
