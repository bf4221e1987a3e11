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

/** How many more attempts a worker may start, and what its attempts under way already hold. */
export interface ClaimBounds {
  /** Free slots of the worker: the most deliveries to claim. */
  limit: number;
  /** Attempts at once to one account's endpoints, counting those under way. */
  perAccount: number;
  /** Attempts at once to one endpoint, counting those under way. */
  perEndpoint: number;
  /** The worker's attempts under way. */
  busy: readonly { account_id: string; endpoint_id: string }[];
}

/**
 * Claims due deliveries of enabled endpoints for one attempt each, fairly: no endpoint or account goes
 * past its bound (counting the worker's attempts under way), and accounts take turns, each account's
 * next slot before any account's one after it, so one account's backlog or hanging endpoints never
 * hold another's deliveries. In one statement: rows other workers are claiming are skipped (SKIP
 * LOCKED), and each claimed row's next attempt moves to the end of the lease, so no other worker or
 * replica takes it while this attempt runs, and a worker that dies mid-attempt leaves it due again
 * once the lease ends (at least once). The lock is needed for that statement alone (the lease is the
 * claim), so this takes the database rather than a transaction.
 */
export async function claimDueDeliveries(
  db: Db,
  now: Date,
  leaseMs: number,
  bounds: ClaimBounds,
): Promise<ClaimedDelivery[]> {
  if (bounds.limit <= 0) return [];
  const leaseEnd = new Date(now.getTime() + leaseMs);
  const { rows } = await sql<ClaimedDelivery>`
    WITH busy AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(bounds.busy)}::jsonb) AS b(account_id uuid, endpoint_id uuid)
    ),
    due AS (
      SELECT due.id, due.account_id, due.next_attempt_at,
        row_number() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.id)
          + (SELECT count(*) FROM busy WHERE busy.endpoint_id = due.endpoint_id) AS endpoint_slot
      FROM catalog.webhook_deliveries AS due
      JOIN catalog.webhook_endpoints AS e ON e.id = due.endpoint_id
      WHERE due.status = 'pending' AND due.next_attempt_at <= ${now} AND e.status = 'enabled'
    ),
    within_endpoint AS (
      SELECT due.id, due.next_attempt_at,
        row_number() OVER (PARTITION BY due.account_id ORDER BY due.endpoint_slot, due.next_attempt_at, due.id)
          + (SELECT count(*) FROM busy WHERE busy.account_id = due.account_id) AS account_slot
      FROM due
      WHERE due.endpoint_slot <= ${bounds.perEndpoint}
    ),
    chosen AS (
      SELECT id FROM within_endpoint
      WHERE account_slot <= ${bounds.perAccount}
      ORDER BY account_slot, next_attempt_at, id
      LIMIT ${bounds.limit}
    ),
    claimed AS (
      UPDATE catalog.webhook_deliveries AS d
      SET next_attempt_at = ${leaseEnd}, attempts = d.attempts + 1, last_attempt_at = ${now}
      WHERE d.id IN (
        -- Checked again under the lock: another worker may have claimed a row since the choice.
        SELECT locked.id FROM catalog.webhook_deliveries AS locked
        WHERE locked.id IN (SELECT id FROM chosen) AND locked.status = 'pending' AND locked.next_attempt_at <= ${now}
        FOR UPDATE SKIP LOCKED
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
export async function recordSuccess(
  db: Db,
  delivery: ClaimedDelivery,
  result: AttemptResult,
  now: Date,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const settled = await trx
      .updateTable("webhook_deliveries")
      .set({
        status: "succeeded",
        next_attempt_at: null,
        last_response_status: result.responseStatus,
        last_error: null,
      })
      .where("id", "=", delivery.id)
      .where("attempts", "=", delivery.attempts)
      .where("status", "=", "pending")
      .executeTakeFirst();
    if (settled.numUpdatedRows === 0n) return;
    await logAttempt(trx, delivery, result);
    await trx
      .updateTable("webhook_endpoints")
      .set({ last_success_at: now })
      .where("id", "=", delivery.endpoint_id)
      .execute();
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
      .set({
        status: "disabled",
        disabled_reason: "deliveries_failing",
        disabled_message: disabledMessage,
        updated_at: now,
      })
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
    .where("id", "in", (eb) =>
      eb.selectFrom("webhook_events").select("id").where("created_at", "<", before).limit(limit),
    )
    .executeTakeFirst();
  await db
    .deleteFrom("relayed_outbox_events")
    .where("id", "in", (eb) =>
      eb.selectFrom("relayed_outbox_events").select("id").where("relayed_at", "<", relayedBefore).limit(limit),
    )
    .execute();
  return Number(events.numDeletedRows);
}
