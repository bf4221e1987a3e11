import type { Transaction } from "kysely";
import type { CatalogTables } from "./tables.js";

/**
 * Serializes one account's creates (QR codes, workspaces, webhook endpoints) for the rest of the
 * transaction: a capacity count cannot be overshot, nor an idempotency key used twice, by two creates
 * at once. The row is made on first use, so an account needs no setup.
 */
export async function lockAccountCreates(trx: Transaction<CatalogTables>, accountId: string): Promise<void> {
  await trx
    .insertInto("account_capacity_locks")
    .values({ account_id: accountId })
    .onConflict((c) => c.doNothing())
    .execute();
  await trx
    .selectFrom("account_capacity_locks")
    .select("account_id")
    .where("account_id", "=", accountId)
    .forUpdate()
    .execute();
}
