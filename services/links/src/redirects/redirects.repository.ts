import type { Kysely } from "kysely";
import type { LinksTables } from "../tables.js";
import type { LinkRow } from "../links/links.table.js";

// The redirect path is not account-scoped: a visitor names a host and a slug, never an account.

type Db = Kysely<LinksTables>;

/** The live link with this generated slug. */
export async function findLiveLinkBySlug(db: Db, slug: string): Promise<LinkRow | undefined> {
  return db.selectFrom("links").selectAll().where("slug", "=", slug).where("deleted_at", "is", null).executeTakeFirst();
}

/** The live link with this vanity slug on the live, verified domain with this hostname. */
export async function findLiveLinkByVanitySlug(
  db: Db,
  hostname: string,
  vanitySlug: string,
): Promise<LinkRow | undefined> {
  return db
    .selectFrom("links")
    .innerJoin("domains", "domains.id", "links.domain_id")
    .selectAll("links")
    .where("domains.hostname", "=", hostname)
    .where("domains.deleted_at", "is", null)
    .where("domains.state", "=", "verified")
    .where("links.vanity_slug", "=", vanitySlug)
    .where("links.deleted_at", "is", null)
    .executeTakeFirst();
}
