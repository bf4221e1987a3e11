import type { Client } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { IdempotencyKeyState, type IdempotencyKeyService } from "@qrplatform/api/tenancy";

/** A response as it is stored and replayed. */
export interface StoredResponse {
  status: number;
  /** The headers worth replaying, by lower-case name. */
  headers: Record<string, string>;
  body: Uint8Array;
}

/** What claiming a key found. */
export type ClaimOutcome =
  /** The request runs under the key; complete or release the claim afterwards. */
  | { state: "claimed"; claimId: string }
  /** The same request already ran: replay its response. */
  | { state: "completed"; response: StoredResponse }
  /** The same request is running now, on this edge or another, until its lease ends at the latest. */
  | { state: "in_progress"; leaseExpiresAt: Date }
  /** The key belongs to a different request. */
  | { state: "reused" };

/**
 * Where Idempotency-Keys live, per account. Every edge replica must see the same keys, and the keys must
 * outlive any edge, so the store is tenancy's table behind its IdempotencyKeyService (ADR 0016).
 */
export interface IdempotencyStore {
  /** Claims `key` for a request with this fingerprint, atomically across replicas. */
  claim(accountId: string, key: string, fingerprint: Uint8Array): Promise<ClaimOutcome>;
  /** Stores the claimed request's response for its retries. */
  complete(accountId: string, key: string, claimId: string, response: StoredResponse): Promise<void>;
  /** Frees the key so that the next request with it runs. */
  release(accountId: string, key: string, claimId: string): Promise<void>;
}

/** The store over tenancy's IdempotencyKeyService. */
export function tenancyIdempotencyStore(client: Client<typeof IdempotencyKeyService>): IdempotencyStore {
  return {
    async claim(accountId, key, fingerprint) {
      const found = await client.claimIdempotencyKey({ accountId, key, fingerprint });
      switch (found.state) {
        case IdempotencyKeyState.CLAIMED:
          return { state: "claimed", claimId: found.claimId };
        case IdempotencyKeyState.COMPLETED: {
          const response = found.response!;
          return {
            state: "completed",
            response: { status: response.statusCode, headers: response.headers, body: response.body },
          };
        }
        case IdempotencyKeyState.IN_PROGRESS:
          return {
            state: "in_progress",
            leaseExpiresAt: found.leaseExpireTime ? timestampDate(found.leaseExpireTime) : new Date(),
          };
        case IdempotencyKeyState.REUSED:
          return { state: "reused" };
        default:
          throw new Error(`ClaimIdempotencyKey answered an unknown state ${found.state}`);
      }
    },
    async complete(accountId, key, claimId, response) {
      await client.completeIdempotencyKey({
        accountId,
        key,
        claimId,
        response: { statusCode: response.status, headers: response.headers, body: response.body },
      });
    },
    async release(accountId, key, claimId) {
      await client.releaseIdempotencyKey({ accountId, key, claimId });
    },
  };
}
