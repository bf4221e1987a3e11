import type { ColumnType, Insertable, Selectable } from "kysely";

/** Bytes as the drivers hand them back: a Buffer from pg, a Uint8Array from PGlite. */
type Bytes = ColumnType<Uint8Array, Uint8Array, Uint8Array>;

/**
 * tenancy.idempotency_keys: one row per Idempotency-Key of an account. While its request runs the row
 * holds the claim and its lease; once it finished, the response to replay. Rows past `expires_at` are
 * treated as absent and swept.
 */
export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  /** SHA-256 of the request's method, path and body: a retry must match it. */
  fingerprint: Bytes;
  /** The claim of the request that runs (or ran) under the key. */
  claim_id: string;
  /** Until when the running request holds the key; past it, with no response, another may take it over. */
  lease_expires_at: Date;
  response_status: number | null;
  response_headers: ColumnType<Record<string, string> | null, string | null, string | null>;
  response_body: ColumnType<Uint8Array | null, Uint8Array | null, Uint8Array | null>;
  created_at: Date;
  expires_at: Date;
}

export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;
export type NewIdempotencyKeyRow = Insertable<IdempotencyKeysTable>;
