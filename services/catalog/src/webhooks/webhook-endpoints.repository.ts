import { sql, type Insertable, type Kysely, type Updateable } from "kysely";
import { afterKeyset, beforeKeyset } from "@qrplatform/db";
import { lockAccountCreates } from "../account-create-lock.js";
import type { CatalogTables } from "../tables.js";
import type { WebhookDeliveryRow, WebhookEndpointRow, WebhookEndpointsTable } from "./webhooks.table.js";

// Every function takes the account id and every query filters on it.

type Db = Kysely<CatalogTables>;

/** The most endpoints one account may register. */
export const MAX_ENDPOINTS_PER_ACCOUNT = 20;

/** What an endpoint create came to: the endpoint inserted, the one its idempotency key already made, or the account full. */
export type InsertOutcome =
  | { outcome: "inserted"; endpoint: WebhookEndpointRow }
  | { outcome: "exists"; endpoint: WebhookEndpointRow }
  | { outcome: "limit_reached" };

/**
 * Inserts an endpoint unless the account already has the most it may. One with an idempotency key held
 * by an endpoint of the account made since `keysKeptSince` is not inserted: that endpoint is the outcome,
 * before the limit is looked at, so a retried create never takes a second place. An older holder gives
 * the key up.
 */
export async function insertEndpoint(
  db: Db,
  row: Pick<
    Insertable<WebhookEndpointsTable>,
    | "id"
    | "account_id"
    | "url"
    | "description"
    | "event_types"
    | "secret"
    | "idempotency_key"
    | "idempotency_fingerprint"
  >,
  keysKeptSince: Date,
): Promise<InsertOutcome> {
  return db.transaction().execute(async (trx): Promise<InsertOutcome> => {
    await lockAccountCreates(trx, row.account_id);
    if (row.idempotency_key) {
      const holder = await trx
        .selectFrom("webhook_endpoints")
        .selectAll()
        .where("account_id", "=", row.account_id)
        .where("idempotency_key", "=", row.idempotency_key)
        .executeTakeFirst();
      if (holder && holder.created_at >= keysKeptSince) return { outcome: "exists", endpoint: holder };
      if (holder) {
        await trx
          .updateTable("webhook_endpoints")
          .set({ idempotency_key: null, idempotency_fingerprint: null })
          .where("account_id", "=", row.account_id)
          .where("id", "=", holder.id)
          .execute();
      }
    }
    const { n } = await trx
      .selectFrom("webhook_endpoints")
      .select(sql<number>`count(*)::int`.as("n"))
      .where("account_id", "=", row.account_id)
      .executeTakeFirstOrThrow();
    if (n >= MAX_ENDPOINTS_PER_ACCOUNT) return { outcome: "limit_reached" };
    const endpoint = await trx
      .insertInto("webhook_endpoints")
      .values({ ...row, status: "enabled" })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { outcome: "inserted", endpoint };
  });
}

export async function findEndpoint(db: Db, accountId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  return db
    .selectFrom("webhook_endpoints")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
}

export async function listEndpoints(
  db: Db,
  accountId: string,
  page: { limit: number; after: { createdAt: Date; id: string } | undefined },
) {
  let query = db.selectFrom("webhook_endpoints").selectAll().where("account_id", "=", accountId);
  if (page.after) query = query.where(afterKeyset("webhook_endpoints", page.after));
  return query.orderBy("created_at").orderBy("id").limit(page.limit).execute();
}

/** Applies the changes; undefined when the endpoint is not the account's. */
export async function updateEndpoint(
  db: Db,
  accountId: string,
  id: string,
  changes: Updateable<WebhookEndpointsTable>,
): Promise<WebhookEndpointRow | undefined> {
  return db
    .updateTable("webhook_endpoints")
    .set({ ...changes, updated_at: new Date() })
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Enables an endpoint: its pending deliveries (held while it was disabled) are due at once, and the
 * failing streak starts over.
 */
export async function enableEndpoint(db: Db, accountId: string, id: string, now: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const enabled = await trx
      .updateTable("webhook_endpoints")
      .set({ status: "enabled", disabled_reason: null, disabled_message: null, last_success_at: now, updated_at: now })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .where("status", "=", "disabled")
      .executeTakeFirst();
    if (enabled.numUpdatedRows === 0n) return;
    await trx
      .updateTable("webhook_deliveries")
      .set({ next_attempt_at: now })
      .where("account_id", "=", accountId)
      .where("endpoint_id", "=", id)
      .where("status", "=", "pending")
      .execute();
  });
}

/** Deletes an endpoint with its deliveries; true when it was the account's. */
export async function deleteEndpoint(db: Db, accountId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("webhook_endpoints")
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The statuses of the delivery log: a pending delivery of a disabled endpoint is paused (held). */
export const DELIVERY_LOG_STATUSES = ["pending", "paused", "succeeded", "failed"] as const;
export type DeliveryLogStatus = (typeof DELIVERY_LOG_STATUSES)[number];

/** A stored delivery's status as the log shows it. */
export function deliveryLogStatus(
  delivery: Pick<WebhookDeliveryRow, "status">,
  endpoint: Pick<WebhookEndpointRow, "status">,
): DeliveryLogStatus {
  return delivery.status === "pending" && endpoint.status === "disabled" ? "paused" : delivery.status;
}

/** An endpoint's deliveries, optionally in one status, oldest or newest first, a page at a time. */
export async function listDeliveries(
  db: Db,
  accountId: string,
  endpoint: Pick<WebhookEndpointRow, "id" | "status">,
  filter: { status: DeliveryLogStatus | undefined; newestFirst: boolean },
  page: { limit: number; after: { createdAt: Date; id: string } | undefined },
) {
  let query = db
    .selectFrom("webhook_deliveries")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("endpoint_id", "=", endpoint.id);
  if (filter.status) {
    // Paused and pending are one stored status, told apart by the endpoint's.
    const paused = endpoint.status === "disabled";
    if (filter.status === "paused" || filter.status === "pending") {
      if ((filter.status === "paused") !== paused) return [];
      query = query.where("status", "=", "pending");
    } else {
      query = query.where("status", "=", filter.status);
    }
  }
  if (page.after)
    query = query.where(
      filter.newestFirst
        ? beforeKeyset("webhook_deliveries", page.after)
        : afterKeyset("webhook_deliveries", page.after),
    );
  const direction = filter.newestFirst ? "desc" : "asc";
  return query.orderBy("created_at", direction).orderBy("id", direction).limit(page.limit).execute();
}

/** One delivery of an endpoint of the account, with its logged attempts in order; undefined when there is none. */
export async function findDeliveryWithAttempts(db: Db, accountId: string, endpointId: string, deliveryId: string) {
  const delivery = await db
    .selectFrom("webhook_deliveries")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("endpoint_id", "=", endpointId)
    .where("id", "=", deliveryId)
    .executeTakeFirst();
  if (!delivery) return undefined;
  const attempts = await db
    .selectFrom("webhook_delivery_attempts")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("delivery_id", "=", deliveryId)
    .orderBy("attempt")
    .execute();
  return { delivery, attempts };
}
