import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
// Timestamps are timestamptz(3): millisecond precision, exactly what a JS Date holds, so keyset
// pagination on created_at compares equal values as equal.

export async function up(db: Kysely<any>): Promise<void> {
  // A removed domain keeps its row (deleted_at set) because deleted links still reference it and keep
  // their vanity slugs reserved on it; its hostname is free again, so uniqueness covers live rows only.
  await db.schema
    .createTable("links.domains")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("hostname", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("challenge_token", "text", (c) => c.notNull())
    .addColumn("failure_reason", "text")
    .addColumn("created_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("verified_at", sql`timestamptz(3)`)
    .addColumn("last_checked_at", sql`timestamptz(3)`)
    .addColumn("deleted_at", sql`timestamptz(3)`)
    .execute();
  await db.schema
    .createIndex("domains_hostname_live")
    .on("links.domains")
    .column("hostname")
    .unique()
    .where(sql.ref("deleted_at"), "is", null)
    .execute();
  await db.schema
    .createIndex("domains_account_id_created_at_id")
    .on("links.domains")
    .columns(["account_id", "created_at", "id"])
    .execute();
  await db.schema.createIndex("domains_created_at_id").on("links.domains").columns(["created_at", "id"]).execute();

  // A deleted link keeps its row (deleted_at set) and with it both of its slugs, forever.
  await db.schema
    .createTable("links.links")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("slug", "text", (c) => c.notNull().unique())
    .addColumn("domain_id", "uuid", (c) => c.references("links.domains.id"))
    .addColumn("vanity_slug", "text")
    .addColumn("destination_url", "text", (c) => c.notNull())
    .addColumn("query_parameters", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("created_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("deleted_at", sql`timestamptz(3)`)
    .addCheckConstraint("links_vanity_pair", sql`(domain_id is null) = (vanity_slug is null)`)
    .execute();
  await db.schema
    .createIndex("links_domain_id_vanity_slug")
    .on("links.links")
    .columns(["domain_id", "vanity_slug"])
    .unique()
    .where(sql.ref("vanity_slug"), "is not", null)
    .execute();
  await db.schema
    .createIndex("links_account_id_created_at_id")
    .on("links.links")
    .columns(["account_id", "created_at", "id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("links.links").execute();
  await db.schema.dropTable("links.domains").execute();
}
