import type { Kysely, Transaction } from "kysely";
import { afterKeyset } from "@qrplatform/db";
import type { TenancyTables } from "../tables.js";
import type { AccountChanges, AccountRow, NewAccountRow } from "./accounts.table.js";

/** Inserts an account; rejects with a unique violation when the slug is taken. */
export async function insert(db: Kysely<TenancyTables>, account: NewAccountRow): Promise<AccountRow> {
  return db.insertInto("accounts").values(account).returningAll().executeTakeFirstOrThrow();
}

export async function find(db: Kysely<TenancyTables>, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Locks the account row for the rest of the transaction, so concurrent updates apply one after another. */
export async function findForUpdate(trx: Transaction<TenancyTables>, id: string): Promise<AccountRow | undefined> {
  return trx.selectFrom("accounts").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();
}

/** Accounts in (created_at, id) order, starting after the given position. */
export async function list(
  db: Kysely<TenancyTables>,
  page: { limit: number; after?: { createdAt: Date; id: string } | undefined },
): Promise<AccountRow[]> {
  let query = db.selectFrom("accounts").selectAll();
  if (page.after) query = query.where(afterKeyset("accounts", page.after));
  return query.orderBy("created_at").orderBy("id").limit(page.limit).execute();
}

export async function update(
  db: Kysely<TenancyTables>,
  id: string,
  changes: AccountChanges,
): Promise<AccountRow | undefined> {
  return db
    .updateTable("accounts")
    .set({ ...changes, updated_at: new Date() })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}
