import { sql, type Kysely, type Transaction } from "kysely";
import { afterKeyset } from "@qrplatform/db";
import { lockAccountCreates } from "../account-create-lock.js";
import type { CatalogTables } from "../tables.js";
import type { NewWorkspaceRow, WorkspaceChanges, WorkspaceWithCount } from "./workspaces.table.js";

// Every function takes the account id and every query filters on it: a workspace of another account
// is invisible here, not merely forbidden higher up.

/** Workspaces with a live count of their QR codes: counted on read, so it is never stale. */
function selectWithCount(db: Kysely<CatalogTables>, accountId: string) {
  return db
    .selectFrom("workspaces")
    .selectAll("workspaces")
    .select((eb) =>
      eb
        .selectFrom("qr_codes")
        .select(sql<number>`count(*)::int`.as("n"))
        .whereRef("qr_codes.workspace_id", "=", "workspaces.id")
        .where("qr_codes.account_id", "=", accountId)
        .where("qr_codes.pending_operation", "is distinct from", "create")
        .as("qr_code_count"),
    )
    .where("workspaces.account_id", "=", accountId);
}

/** What a workspace create came to: the workspace it inserted, or the one its idempotency key already made. */
export type InsertOutcome =
  | { outcome: "inserted"; workspace: WorkspaceWithCount }
  | { outcome: "exists"; workspace: WorkspaceWithCount };

/**
 * Inserts a workspace. One with an idempotency key is inserted only if no workspace of the account made
 * since `keysKeptSince` holds that key, under the account's create lock, so concurrent repeats of the
 * key make one workspace; otherwise that workspace is the outcome. An older holder gives the key up.
 */
export async function insertWorkspace(
  db: Kysely<CatalogTables>,
  row: NewWorkspaceRow,
  keysKeptSince: Date,
): Promise<InsertOutcome> {
  const key = row.idempotency_key;
  if (!key) {
    const inserted = await db.insertInto("workspaces").values(row).returningAll().executeTakeFirstOrThrow();
    return { outcome: "inserted", workspace: { ...inserted, qr_code_count: 0 } };
  }
  return db.transaction().execute(async (trx): Promise<InsertOutcome> => {
    await lockAccountCreates(trx, row.account_id);
    const holder = await selectWithCount(trx, row.account_id)
      .where("workspaces.idempotency_key", "=", key)
      .executeTakeFirst();
    if (holder && holder.created_at >= keysKeptSince)
      return { outcome: "exists", workspace: { ...holder, qr_code_count: holder.qr_code_count ?? 0 } };
    if (holder) {
      await trx
        .updateTable("workspaces")
        .set({ idempotency_key: null, idempotency_fingerprint: null })
        .where("account_id", "=", row.account_id)
        .where("id", "=", holder.id)
        .execute();
    }
    const inserted = await trx.insertInto("workspaces").values(row).returningAll().executeTakeFirstOrThrow();
    return { outcome: "inserted", workspace: { ...inserted, qr_code_count: 0 } };
  });
}

export async function findWorkspace(
  db: Kysely<CatalogTables>,
  accountId: string,
  id: string,
): Promise<WorkspaceWithCount | undefined> {
  const row = await selectWithCount(db, accountId).where("workspaces.id", "=", id).executeTakeFirst();
  return row && { ...row, qr_code_count: row.qr_code_count ?? 0 };
}

export async function listWorkspaces(
  db: Kysely<CatalogTables>,
  accountId: string,
  page: { limit: number; after: { createdAt: Date; id: string } | undefined },
): Promise<WorkspaceWithCount[]> {
  let query = selectWithCount(db, accountId);
  if (page.after) query = query.where(afterKeyset("workspaces", page.after));
  const rows = await query.orderBy("workspaces.created_at").orderBy("workspaces.id").limit(page.limit).execute();
  return rows.map((row) => ({ ...row, qr_code_count: row.qr_code_count ?? 0 }));
}

/** Applies the changes; undefined when the workspace is not the account's. */
export async function updateWorkspace(
  db: Kysely<CatalogTables>,
  accountId: string,
  id: string,
  changes: WorkspaceChanges,
): Promise<boolean> {
  const result = await db
    .updateTable("workspaces")
    .set({ ...changes, updated_at: new Date() })
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Locks the account's workspace for the rest of the transaction; false when it has none by that id.
 * `update` is the delete's lock; `key share` is taken by whatever puts a code in the workspace, so a
 * delete waits for it and then counts that code, or a code arriving after the delete finds no workspace.
 */
export async function lockWorkspace(
  trx: Transaction<CatalogTables>,
  accountId: string,
  id: string,
  mode: "update" | "key share",
): Promise<boolean> {
  const query = trx.selectFrom("workspaces").select("id").where("account_id", "=", accountId).where("id", "=", id);
  const row = await (mode === "update" ? query.forUpdate() : query.forKeyShare()).executeTakeFirst();
  return row !== undefined;
}

/** Every code in the workspace, those whose create or delete is still under way included. */
export async function countAllQrCodes(db: Kysely<CatalogTables>, accountId: string, id: string): Promise<number> {
  const row = await db
    .selectFrom("qr_codes")
    .select(sql<number>`count(*)::int`.as("n"))
    .where("account_id", "=", accountId)
    .where("workspace_id", "=", id)
    .executeTakeFirstOrThrow();
  return row.n;
}

/** Deletes the workspace; true when it was the account's. */
export async function deleteWorkspace(db: Kysely<CatalogTables>, accountId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("workspaces")
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
