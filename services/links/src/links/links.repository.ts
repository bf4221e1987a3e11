import { sql, type Kysely } from "kysely";
import type { LinksTables } from "../tables.js";
import type { LinkChanges, LinkView, NewLinkRow } from "./links.table.js";

// Every function that reads or changes a link takes the account id and filters on it: another
// account's link is invisible here, not merely forbidden higher up.

type Db = Kysely<LinksTables>;

/** Links that are not deleted, with their custom domain's hostname. */
function liveLinks(db: Db) {
  return db
    .selectFrom("links")
    .leftJoin("domains", "domains.id", "links.domain_id")
    .selectAll("links")
    .select("domains.hostname")
    .where("links.deleted_at", "is", null);
}

/**
 * Inserts a link unless one of its slugs is taken (by a live or a deleted link); returns whether it
 * was inserted. A conflict is an answer, not an error, so a surrounding transaction stays usable.
 */
export async function insertLink(db: Db, row: NewLinkRow): Promise<boolean> {
  const inserted = await db
    .insertInto("links")
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .returning("id")
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Whether any link, live or deleted, holds the vanity slug on the domain. */
export async function vanitySlugTaken(db: Db, domainId: string, vanitySlug: string): Promise<boolean> {
  const row = await db
    .selectFrom("links")
    .select("id")
    .where("domain_id", "=", domainId)
    .where("vanity_slug", "=", vanitySlug)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether any link, live or deleted, of any account has this id. */
export async function linkIdTaken(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom("links").select("id").where("id", "=", id).executeTakeFirst()) !== undefined;
}

export async function findLink(db: Db, accountId: string, id: string): Promise<LinkView | undefined> {
  return liveLinks(db).where("links.account_id", "=", accountId).where("links.id", "=", id).executeTakeFirst();
}

/** Applies the changes to a live link of the account; returns whether there was one. */
export async function updateLink(
  db: Db,
  accountId: string,
  id: string,
  changes: LinkChanges,
  at: Date,
): Promise<boolean> {
  const result = await db
    .updateTable("links")
    .set({ ...changes, updated_at: at })
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Deletes a live link of the account, keeping its row so its slugs stay reserved; returns whether there was one. */
export async function deleteLink(db: Db, accountId: string, id: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable("links")
    .set({ deleted_at: at, updated_at: at })
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Removes a live link of the account and its row, freeing its slugs; returns whether there was one. */
export async function purgeLink(db: Db, accountId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("links")
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** How many live links have a vanity slug on the domain. */
export async function countLiveLinksOnDomain(db: Db, domainId: string): Promise<number> {
  const row = await db
    .selectFrom("links")
    .select(sql<number>`count(*)::int`.as("n"))
    .where("domain_id", "=", domainId)
    .where("deleted_at", "is", null)
    .executeTakeFirstOrThrow();
  return row.n;
}
