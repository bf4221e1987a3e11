import { randomUUID } from "node:crypto";
import { sql, type Transaction } from "kysely";
import type { QrCodeRow } from "../qr-codes/qr-codes.table.js";
import type { CatalogTables } from "../tables.js";

/** Every event type an endpoint may subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  "qr_code.created",
  "qr_code.updated",
  "qr_code.deleted",
  "qr_code.scanned",
  "qr_code.scan_limit_reached",
  "qr_code.expired",
  "domain.verified",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** One event: what happened, to which account, with the data its receivers get. */
export interface WebhookEvent {
  /** Given when the event has an id already (one relayed from the links service), so a repeat adds nothing. */
  id?: string;
  accountId: string;
  type: WebhookEventType;
  data: Record<string, unknown>;
  occurredAt: Date;
}

/**
 * The most deliveries held for one disabled endpoint; past it, the oldest held are dropped and counted
 * on the endpoint (held_deliveries_dropped).
 */
export const MAX_HELD_DELIVERIES_PER_ENDPOINT = 1000;

/**
 * Records an event and one pending delivery per endpoint of the account subscribed to its type, in the
 * caller's transaction: the change and its event commit together or not at all. A disabled endpoint's
 * delivery is held (pending, not claimed) until the endpoint is enabled, up to
 * MAX_HELD_DELIVERIES_PER_ENDPOINT. An account without such an endpoint stores nothing. The body is
 * the Standard Webhooks shape: `{"type", "timestamp", "data"}`.
 */
export async function recordEvent(trx: Transaction<CatalogTables>, event: WebhookEvent): Promise<void> {
  const id = event.id ?? randomUUID();
  const body = JSON.stringify({ type: event.type, timestamp: event.occurredAt.toISOString(), data: event.data });
  await sql`
    WITH targets AS (
      SELECT id FROM catalog.webhook_endpoints
      WHERE account_id = ${event.accountId} AND ${event.type} = ANY(event_types)
    ),
    event AS (
      INSERT INTO catalog.webhook_events (id, account_id, type, body, created_at)
      SELECT ${id}, ${event.accountId}, ${event.type}, ${body}, ${event.occurredAt}
      WHERE EXISTS (SELECT 1 FROM targets)
      ON CONFLICT (id) DO NOTHING
      RETURNING id
    )
    INSERT INTO catalog.webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, status, next_attempt_at)
    SELECT gen_random_uuid(), ${event.accountId}, targets.id, event.id, ${event.type}, 'pending', ${event.occurredAt}
    FROM targets CROSS JOIN event
  `.execute(trx);
  await dropOldestHeld(trx, event);
}

/** Keeps the newest held deliveries of the account's disabled endpoints subscribed to the type, counting the ones dropped. */
async function dropOldestHeld(trx: Transaction<CatalogTables>, event: WebhookEvent): Promise<void> {
  await sql`
    WITH held AS (
      SELECT d.id, row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.created_at DESC, d.next_attempt_at DESC, d.id DESC) AS newest
      FROM catalog.webhook_deliveries AS d
      JOIN catalog.webhook_endpoints AS e ON e.id = d.endpoint_id
      WHERE e.account_id = ${event.accountId} AND e.status = 'disabled' AND ${event.type} = ANY(e.event_types)
        AND d.account_id = ${event.accountId} AND d.status = 'pending'
    ),
    dropped AS (
      DELETE FROM catalog.webhook_deliveries AS d
      USING held
      WHERE d.id = held.id AND held.newest > ${MAX_HELD_DELIVERIES_PER_ENDPOINT}
      RETURNING d.endpoint_id
    )
    UPDATE catalog.webhook_endpoints AS e
    SET held_deliveries_dropped = e.held_deliveries_dropped + counted.n
    FROM (SELECT endpoint_id, count(*)::int AS n FROM dropped GROUP BY endpoint_id) AS counted
    WHERE e.id = counted.endpoint_id AND e.account_id = ${event.accountId}
  `.execute(trx);
}

/** A QR code as its events carry it: the public fields that need no request to spell. */
export function qrCodeEventData(
  row: Pick<
    QrCodeRow,
    | "id"
    | "account_id"
    | "workspace_id"
    | "name"
    | "destination_url"
    | "status"
    | "tags"
    | "vanity_url"
    | "canonical_url"
    | "created_at"
    | "updated_at"
  >,
): Record<string, unknown> {
  return {
    id: row.id,
    account_id: row.account_id,
    workspace_id: row.workspace_id,
    name: row.name,
    destination_url: row.destination_url,
    status: row.status,
    tags: row.tags,
    vanity_url: row.vanity_url,
    canonical_url: row.canonical_url,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
