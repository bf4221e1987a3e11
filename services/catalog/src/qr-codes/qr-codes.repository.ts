import { sql, type Kysely } from "kysely";
import { afterKeyset } from "@qrplatform/db";
import type { CatalogTables } from "../tables.js";
import type { NewQrCodeRow, ProvisionedQrCodeRow, QrCodeChanges } from "./qr-codes.table.js";

// Every function takes the account id and every query filters on it.

/** A reservation that was not completed within this time was abandoned by a crashed create. */
const ABANDONED_AFTER_MS = 5 * 60 * 1000;

/** What a create may use: undefined means unlimited. */
export interface CapacityLimits {
  qrCodes: number | undefined;
  customLinks: number | undefined;
}

/** Why a reservation was refused. */
export type CapacityRefusal = { limit: "qr_codes" | "custom_links"; used: number; max: number };

const provisioned = (db: Kysely<CatalogTables>, accountId: string) =>
  db.selectFrom("qr_codes").selectAll().where("account_id", "=", accountId).where("link_id", "is not", null);

async function countCodes(db: Kysely<CatalogTables>, accountId: string, customLinksOnly = false): Promise<number> {
  let query = db.selectFrom("qr_codes").select(sql<number>`count(*)::int`.as("n")).where("account_id", "=", accountId);
  if (customLinksOnly) query = query.where("vanity_domain_id", "is not", null);
  return (await query.executeTakeFirstOrThrow()).n;
}

/**
 * Inserts a code without its link, if the account has room. The account's lock row is held while
 * counting and inserting, so concurrent creates are admitted one at a time and never overshoot.
 */
export async function reserveQrCode(
  db: Kysely<CatalogTables>,
  row: NewQrCodeRow & { account_id: string },
  limits: CapacityLimits,
  now: Date,
): Promise<CapacityRefusal | undefined> {
  return db.transaction().execute(async (tx) => {
    await tx.insertInto("account_capacity_locks").values({ account_id: row.account_id }).onConflict((c) => c.doNothing()).execute();
    await tx.selectFrom("account_capacity_locks").select("account_id").where("account_id", "=", row.account_id).forUpdate().execute();
    await tx
      .deleteFrom("qr_codes")
      .where("account_id", "=", row.account_id)
      .where("link_id", "is", null)
      .where("created_at", "<", new Date(now.getTime() - ABANDONED_AFTER_MS))
      .execute();

    if (limits.qrCodes !== undefined) {
      const used = await countCodes(tx, row.account_id);
      if (used >= limits.qrCodes) return { limit: "qr_codes", used, max: limits.qrCodes };
    }
    if (row.vanity_domain_id && limits.customLinks !== undefined) {
      const used = await countCodes(tx, row.account_id, true);
      if (used >= limits.customLinks) return { limit: "custom_links", used, max: limits.customLinks };
    }
    await tx.insertInto("qr_codes").values(row).execute();
    return undefined;
  });
}

/** Attaches the created link to a reserved code, making it visible. */
export async function completeQrCode(
  db: Kysely<CatalogTables>,
  accountId: string,
  id: string,
  link: { link_id: string; vanity_url: string; canonical_url: string; destination_url: string },
): Promise<ProvisionedQrCodeRow> {
  const row = await db
    .updateTable("qr_codes")
    .set(link)
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .where("link_id", "is", null)
    .returningAll()
    .executeTakeFirstOrThrow();
  return row as ProvisionedQrCodeRow;
}

/** Drops a reservation whose link could not be made, freeing its capacity. */
export async function discardReservation(db: Kysely<CatalogTables>, accountId: string, id: string): Promise<void> {
  await db.deleteFrom("qr_codes").where("account_id", "=", accountId).where("id", "=", id).where("link_id", "is", null).execute();
}

export async function findQrCode(db: Kysely<CatalogTables>, accountId: string, id: string): Promise<ProvisionedQrCodeRow | undefined> {
  return (await provisioned(db, accountId).where("id", "=", id).executeTakeFirst()) as ProvisionedQrCodeRow | undefined;
}

export async function listQrCodes(
  db: Kysely<CatalogTables>,
  accountId: string,
  filter: { workspaceId: string | undefined },
  page: { limit: number; after: { createdAt: Date; id: string } | undefined },
): Promise<ProvisionedQrCodeRow[]> {
  let query = provisioned(db, accountId);
  if (filter.workspaceId) query = query.where("workspace_id", "=", filter.workspaceId);
  if (page.after) query = query.where(afterKeyset("qr_codes", page.after));
  return (await query.orderBy("created_at").orderBy("id").limit(page.limit).execute()) as ProvisionedQrCodeRow[];
}

/** Applies the changes and returns the code; undefined when it is not the account's. */
export async function updateQrCode(
  db: Kysely<CatalogTables>,
  accountId: string,
  id: string,
  changes: QrCodeChanges,
): Promise<ProvisionedQrCodeRow | undefined> {
  const row = await db
    .updateTable("qr_codes")
    .set({ ...changes, updated_at: new Date() })
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .where("link_id", "is not", null)
    .returningAll()
    .executeTakeFirst();
  return row as ProvisionedQrCodeRow | undefined;
}

/** Deletes a code; true when it was the account's. */
export async function deleteQrCode(db: Kysely<CatalogTables>, accountId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom("qr_codes").where("account_id", "=", accountId).where("id", "=", id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** How many codes the account holds, reservations included. */
export async function countAccountQrCodes(db: Kysely<CatalogTables>, accountId: string): Promise<number> {
  return countCodes(db, accountId);
}
