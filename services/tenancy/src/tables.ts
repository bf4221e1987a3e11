import type { AccountsTable } from "./accounts/accounts.table.js";
import type { IdempotencyKeysTable } from "./idempotency/idempotency-keys.table.js";
import type { ApiKeysTable } from "./keys/api-keys.table.js";

/** Every table of the tenancy schema, for a `Kysely<TenancyTables>` narrowed with `withSchema("tenancy")`. */
export interface TenancyTables {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
}
