import { sql, type Kysely } from "kysely";
import type { CatalogTables } from "../tables.js";

// The delivery workers' queries. They work across accounts (a worker serves every account) and carry
// each row's account id into what they write.

type Db = Kysely<CatalogTables>;

/** A claimed delivery with what its attempt needs. */
export interface ClaimedDelivery {
  id: string;
  account_id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
  created_at: Date;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  body: string;
}

/**
 * Claims up to `limit` due deliveries of enabled endpoints for one attempt each. In one statement:
 * rows other workers are claiming are skipped (SKIP LOCKED), and each claimed row's next attempt moves
 * to the end of the lease, so no other worker or replica takes it while this attempt runs, and a
 * worker that dies mid-attempt leaves it due again once the lease ends (at least once).
 */
export async function claimDueDeliveries(db: Db, now: Date, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
  const leaseEnd = new Date(now.getTime() + leaseMs);
  const { rows } = await sql<ClaimedDelivery>`
    WITH claimed AS (
      UPDATE catalog.webhook_deliveries AS d
      SET next_attempt_at = ${leaseEnd}, attempts = d.attempts + 1, last_attempt_at = ${now}
      WHERE d.id IN (
        SELECT due.id FROM catalog.webhook_deliveries AS due
        JOIN catalog.webhook_endpoints AS e ON e.id = due.endpoint_id
        WHERE due.status = 'pending' AND due.next_attempt_at <= ${now} AND e.status = 'enabled'
        ORDER BY due.next_attempt_at
        LIMIT ${limit}
        FOR UPDATE OF due SKIP LOCKED
      )
      RETURNING d.*
    )
    SELECT claimed.id, claimed.account_id, claimed.endpoint_id, claimed.event_id, claimed.attempts, claimed.created_at,
      e.url, e.secret, e.previous_secret, e.previous_secret_expires_at, ev.body
    FROM claimed
    JOIN catalog.webhook_endpoints AS e ON e.id = claimed.endpoint_id
    JOIN catalog.webhook_events AS ev ON ev.id = claimed.event_id
  `.execute(db);
  return rows;
}

/** What one attempt came to. */
export interface AttemptResult {
  /** When its request was sent, and how long it took. */
  attemptedAt: Date;
  durationMs: number;
  responseStatus: number | null;
  error: string | null;
}

/** Adds the attempt to the delivery's log, in the transaction that records its outcome on the delivery. */
async function logAttempt(trx: Db, delivery: ClaimedDelivery, result: AttemptResult): Promise<void> {
  await trx
    .insertInto("webhook_delivery_attempts")
    .values({
      delivery_id: delivery.id,
      attempt: delivery.attempts,
      account_id: delivery.account_id,
      attempted_at: result.attemptedAt,
      duration_ms: result.durationMs,
      response_status: result.responseStatus,
      error: result.error,
    })
    .execute();
}

/**
 * Records a successful attempt, if the claim is still this attempt's. An attempt that lost its claim (its
 * lease ran out and the delivery was claimed again) is left out of the log: the next one stands for it.
 */
export async function recordSuccess(db: Db, delivery: ClaimedDelivery, result: AttemptResult, now: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const settled = await trx
      .updateTable("webhook_deliveries")
      .set({ status: "succeeded", next_attempt_at: null, last_response_status: result.responseStatus, last_error: null })
      .where("id", "=", delivery.id)
      .where("attempts", "=", delivery.attempts)
      .where("status", "=", "pending")
      .executeTakeFirst();
    if (settled.numUpdatedRows === 0n) return;
    await logAttempt(trx, delivery, result);
    await trx.updateTable("webhook_endpoints").set({ last_success_at: now }).where("id", "=", delivery.endpoint_id).execute();
  });
}

/**
 * Records a failed attempt: the next one is due at `retryAt`, or, with none left, the delivery has
 * failed, and so has the endpoint if nothing was delivered to it since this delivery began: it is
 * disabled, saying why. Returns whether the endpoint was disabled now.
 */
export async function recordFailure(
  db: Db,
  delivery: ClaimedDelivery,
  result: AttemptResult,
  retryAt: Date | undefined,
  now: Date,
  disabledMessage: string,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const settled = await trx
      .updateTable("webhook_deliveries")
      .set({
        status: retryAt ? "pending" : "failed",
        next_attempt_at: retryAt ?? null,
        last_response_status: result.responseStatus,
        last_error: result.error,
      })
      .where("id", "=", delivery.id)
      .where("attempts", "=", delivery.attempts)
      .where("status", "=", "pending")
      .executeTakeFirst();
    if (settled.numUpdatedRows === 0n) return false;
    await logAttempt(trx, delivery, result);
    if (retryAt) return false;
    const disabled = await trx
      .updateTable("webhook_endpoints")
      .set({ status: "disabled", disabled_reason: "deliveries_failing", disabled_message: disabledMessage, updated_at: now })
      .where("id", "=", delivery.endpoint_id)
      .where("status", "=", "enabled")
      .where((eb) => eb.or([eb("last_success_at", "is", null), eb("last_success_at", "<", delivery.created_at)]))
      .executeTakeFirst();
    return disabled.numUpdatedRows > 0n;
  });
}

/** Deletes up to `limit` events (with their deliveries) older than `before`, and relay records a day old. */
export async function deleteExpired(db: Db, before: Date, relayedBefore: Date, limit: number): Promise<number> {
  const events = await db
    .deleteFrom("webhook_events")
    .where("id", "in", (eb) => eb.selectFrom("webhook_events").select("id").where("created_at", "<", before).limit(limit))
    .executeTakeFirst();
  await db
    .deleteFrom("relayed_outbox_events")
    .where("id", "in", (eb) => eb.selectFrom("relayed_outbox_events").select("id").where("relayed_at", "<", relayedBefore).limit(limit))
    .execute();
  return Number(events.numDeletedRows);
}
