import type { Migrations } from "@qrplatform/db";
import * as workspacesAndQrCodes from "./20261122T1600_workspaces_and_qr_codes.js";
import * as scanTotalsInLinks from "./20261123T1400_scan_totals_in_links.js";
import * as pendingLinkOperations from "./20261124T0900_pending_link_operations.js";
import * as qrCodeIdempotencyKeys from "./20261220T1000_qr_code_idempotency_keys.js";
import * as webhooks from "./20261230T1000_webhooks.js";
import * as webhookDeliveryAttempts from "./20270110T1000_webhook_delivery_attempts.js";
import * as heldWebhookDeliveries from "./20270120T1000_held_webhook_deliveries.js";
import * as createIdempotencyKeys from "./20270201T1000_create_idempotency_keys.js";
import * as qrCodeRouting from "./20270215T1000_qr_code_routing.js";

/** The catalog schema's migrations, oldest first. */
export const migrations: Migrations = {
  "20261122T1600_workspaces_and_qr_codes": workspacesAndQrCodes,
  "20261123T1400_scan_totals_in_links": scanTotalsInLinks,
  "20261124T0900_pending_link_operations": pendingLinkOperations,
  "20261220T1000_qr_code_idempotency_keys": qrCodeIdempotencyKeys,
  "20261230T1000_webhooks": webhooks,
  "20270110T1000_webhook_delivery_attempts": webhookDeliveryAttempts,
  "20270120T1000_held_webhook_deliveries": heldWebhookDeliveries,
  "20270201T1000_create_idempotency_keys": createIdempotencyKeys,
  "20270215T1000_qr_code_routing": qrCodeRouting,
};

/** The Postgres schema that holds the catalog's tables. */
export const SCHEMA = "catalog";
