import type { ColumnType, Generated, Selectable } from "kysely";

/** catalog.webhook_endpoints: where an account receives events, and the secrets that sign them. */
export interface WebhookEndpointsTable {
  id: string;
  account_id: string;
  url: string;
  description: string | null;
  event_types: ColumnType<string[], string[], string[]>;
  /** "enabled" or "disabled". */
  status: "enabled" | "disabled";
  /** "disabled_by_account" or "deliveries_failing", while disabled. */
  disabled_reason: string | null;
  disabled_message: string | null;
  /** "whsec_" and base64: stored as is, because signing needs it. */
  secret: string;
  /** The secret a rotation replaced, signing beside the new one until previous_secret_expires_at. */
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  /** When a delivery last succeeded; an endpoint that never succeeded since a delivery began is failing. */
  last_success_at: Date | null;
  /** Held deliveries dropped, oldest first, because more than the bound were held while it was disabled. */
  held_deliveries_dropped: Generated<number>;
  /** The client's Idempotency-Key of the create that made it (per account, unique), if it sent one. */
  idempotency_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** SHA-256 of the request that key was first used for. */
  idempotency_fingerprint: ColumnType<Buffer | null, Uint8Array | null | undefined, Uint8Array | null>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** catalog.webhook_events: an event, with the body every endpoint receives. */
export interface WebhookEventsTable {
  id: string;
  account_id: string;
  type: string;
  body: string;
  created_at: Generated<Date>;
}

/** catalog.webhook_deliveries: one event for one endpoint, and how its attempts went. */
export interface WebhookDeliveriesTable {
  id: string;
  account_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  /** A pending delivery of a disabled endpoint is held: not attempted until the endpoint is enabled. */
  status: "pending" | "succeeded" | "failed";
  attempts: Generated<number>;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_response_status: number | null;
  last_error: string | null;
  created_at: Generated<Date>;
}

/** catalog.webhook_delivery_attempts: each recorded attempt of a delivery, and what came of it. */
export interface WebhookDeliveryAttemptsTable {
  delivery_id: string;
  attempt: number;
  account_id: string;
  attempted_at: Date;
  duration_ms: number;
  response_status: number | null;
  error: string | null;
}

/** catalog.relayed_outbox_events: ids of the links service's events already relayed, kept a day. */
export interface RelayedOutboxEventsTable {
  id: string;
  relayed_at: Generated<Date>;
}

/** catalog.scan_tallies: scans of a QR code in one period, waiting for the period to end. */
export interface ScanTalliesTable {
  qr_code_id: string;
  period_start: Date;
  account_id: string;
  scans: ColumnType<string, number | string, number | string>;
}

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookDeliveryAttemptRow = Selectable<WebhookDeliveryAttemptsTable>;
