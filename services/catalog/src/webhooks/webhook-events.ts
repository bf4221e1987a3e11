import { randomUUID } from "node:crypto";
import { sql, type Kysely } from "kysely";
import type { QrCodeRow } from "../qr-codes/qr-codes.table.js";
import type { CatalogTables } from "../tables.js";

/** Every event type an endpoint may subscribe to. */
export const WEBHOOK_EVENT_TYPES = ["qr_code.created", "qr_code.updated", "qr_code.deleted", "qr_code.scanned", "domain.verified"] as const;
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
 * Records an event and one pending delivery per enabled endpoint of the account subscribed to its type,
 * in the caller's transaction: the change and its event commit together or not at all. An account
 * without such an endpoint stores nothing. The body is the Standard Webhooks shape:
 * `{"type", "timestamp", "data"}`.
 */
export async function recordEvent(trx: Kysely<CatalogTables>, event: WebhookEvent): Promise<void> {
  const id = event.id ?? randomUUID();
  const body = JSON.stringify({ type: event.type, timestamp: event.occurredAt.toISOString(), data: event.data });
  await sql`
    WITH targets AS (
      SELECT id FROM catalog.webhook_endpoints
      WHERE account_id = ${event.accountId} AND status = 'enabled' AND ${event.type} = ANY(event_types)
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
}

/** A QR code as its events carry it: the public fields that need no request to spell. */
export function qrCodeEventData(
  row: Pick<QrCodeRow, "id" | "account_id" | "workspace_id" | "name" | "destination_url" | "status" | "tags" | "vanity_url" | "canonical_url" | "created_at" | "updated_at">,
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
