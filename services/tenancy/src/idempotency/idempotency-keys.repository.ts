import type { Kysely } from "kysely";
import type { TenancyTables } from "../tables.js";
import type { IdempotencyKeyRow, NewIdempotencyKeyRow } from "./idempotency-keys.table.js";

/**
 * Inserts the claim, or takes over the existing row when it is free: expired, or abandoned (no response,
 * lease over) by a request with the same fingerprint. One statement, so of concurrent claims exactly one
 * wins, on every replica. Answers the row as it now stands, or undefined if it vanished meanwhile (a
 * release between the insert and the read); the claim won when the row carries `claim.claim_id`.
 */
export async function claim(
  db: Kysely<TenancyTables>,
  claimRow: NewIdempotencyKeyRow,
  now: Date,
): Promise<IdempotencyKeyRow | undefined> {
  const won = await db
    .insertInto("idempotency_keys")
    .values(claimRow)
    .onConflict((oc) =>
      oc
        .columns(["account_id", "key"])
        .doUpdateSet({
          fingerprint: (eb) => eb.ref("excluded.fingerprint"),
          claim_id: (eb) => eb.ref("excluded.claim_id"),
          lease_expires_at: (eb) => eb.ref("excluded.lease_expires_at"),
          response_status: null,
          response_headers: null,
          response_body: null,
          created_at: (eb) => eb.ref("excluded.created_at"),
          expires_at: (eb) => eb.ref("excluded.expires_at"),
        })
        .where((eb) =>
          eb.or([
            eb("idempotency_keys.expires_at", "<=", now),
            eb.and([
              eb("idempotency_keys.response_status", "is", null),
              eb("idempotency_keys.lease_expires_at", "<=", now),
              eb("idempotency_keys.fingerprint", "=", claimRow.fingerprint),
            ]),
          ]),
        ),
    )
    .returningAll()
    .executeTakeFirst();
  if (won) return won;
  return db
    .selectFrom("idempotency_keys")
    .selectAll()
    .where("account_id", "=", claimRow.account_id)
    .where("key", "=", claimRow.key)
    .executeTakeFirst();
}

/** Stores the response of the request holding `claimId`; false when the claim is no longer held. */
export async function complete(
  db: Kysely<TenancyTables>,
  accountId: string,
  key: string,
  claimId: string,
  response: { status: number; headers: Record<string, string>; body: Uint8Array },
): Promise<boolean> {
  const result = await db
    .updateTable("idempotency_keys")
    .set({
      response_status: response.status,
      response_headers: JSON.stringify(response.headers),
      response_body: response.body,
    })
    .where("account_id", "=", accountId)
    .where("key", "=", key)
    .where("claim_id", "=", claimId)
    .where("response_status", "is", null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Deletes the row of a claim that has no response yet; a claim no longer held is left alone. */
export async function release(
  db: Kysely<TenancyTables>,
  accountId: string,
  key: string,
  claimId: string,
): Promise<void> {
  await db
    .deleteFrom("idempotency_keys")
    .where("account_id", "=", accountId)
    .where("key", "=", key)
    .where("claim_id", "=", claimId)
    .where("response_status", "is", null)
    .execute();
}

/** Deletes up to `limit` expired keys, oldest first, and answers how many. */
export async function deleteExpired(db: Kysely<TenancyTables>, now: Date, limit: number): Promise<number> {
  const result = await db
    .deleteFrom("idempotency_keys")
    .where((eb) =>
      eb(
        eb.refTuple("account_id", "key"),
        "in",
        eb
          .selectFrom("idempotency_keys")
          .select(["account_id", "key"])
          .where("expires_at", "<=", now)
          .orderBy("expires_at")
          .limit(limit)
          .$asTuple("account_id", "key"),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
