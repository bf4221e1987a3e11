import type { AccountCapacityLocksTable, QrCodesTable } from "./qr-codes/qr-codes.table.js";
import type {
  RelayedOutboxEventsTable,
  ScanTalliesTable,
  WebhookDeliveriesTable,
  WebhookDeliveryAttemptsTable,
  WebhookEndpointsTable,
  WebhookEventsTable,
} from "./webhooks/webhooks.table.js";
import type { WorkspacesTable } from "./workspaces/workspaces.table.js";

/** Every table of the catalog schema, for a `Kysely<CatalogTables>` narrowed with `withSchema("catalog")`. */
export interface CatalogTables {
  workspaces: WorkspacesTable;
  qr_codes: QrCodesTable;
  account_capacity_locks: AccountCapacityLocksTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  relayed_outbox_events: RelayedOutboxEventsTable;
  scan_tallies: ScanTalliesTable;
}
