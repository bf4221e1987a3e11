import type { AccountCapacityLocksTable, QrCodesTable } from "./qr-codes/qr-codes.table.js";
import type { WorkspacesTable } from "./workspaces/workspaces.table.js";

/** Every table of the catalog schema, for a `Kysely<CatalogTables>` narrowed with `withSchema("catalog")`. */
export interface CatalogTables {
  workspaces: WorkspacesTable;
  qr_codes: QrCodesTable;
  account_capacity_locks: AccountCapacityLocksTable;
}
