import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// A link's routing (issue 35): ordered rules as JSON in the API's own names, a lifetime (starts_at,
// expires_at), a scan limit and the URL that scans outside them go to, and a password kept only as a
// scrypt hash. Every column but rules is null when unused; rules is an empty array. The redirector
// loads them with the link, so a link without routing costs one row as before.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("links.links")
    .addColumn("rules", "jsonb", (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("starts_at", sql`timestamptz(3)`)
    .addColumn("expires_at", sql`timestamptz(3)`)
    .addColumn("max_scans", "integer")
    .addColumn("expired_url", "text")
    .addColumn("password_hash", "text")
    .execute();
  await db.schema
    .alterTable("links.links")
    .addCheckConstraint(
      "links_lifetime_ordered",
      sql`starts_at is null or expires_at is null or starts_at < expires_at`,
    )
    .execute();
  await db.schema
    .alterTable("links.links")
    .addCheckConstraint("links_max_scans_positive", sql`max_scans is null or max_scans >= 1`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("links.links").dropConstraint("links_max_scans_positive").execute();
  await db.schema.alterTable("links.links").dropConstraint("links_lifetime_ordered").execute();
  await db.schema
    .alterTable("links.links")
    .dropColumn("rules")
    .dropColumn("starts_at")
    .dropColumn("expires_at")
    .dropColumn("max_scans")
    .dropColumn("expired_url")
    .dropColumn("password_hash")
    .execute();
}
