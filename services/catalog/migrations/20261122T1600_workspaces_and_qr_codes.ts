import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
// Timestamps are timestamptz(3): millisecond precision, exactly what a JS Date holds, so keyset
// pagination on created_at compares equal values as equal.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("catalog.workspaces")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("slug", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("logo_url", "text")
    .addColumn("created_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("workspaces_account_id_slug", ["account_id", "slug"])
    .execute();
  await db.schema
    .createIndex("workspaces_account_id_created_at_id")
    .on("catalog.workspaces")
    .columns(["account_id", "created_at", "id"])
    .execute();

  // A row with no link_id is a code being provisioned: it holds its place in the account's capacity
  // while its short link is created, and is invisible to reads.
  await db.schema
    .createTable("catalog.qr_codes")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("workspace_id", "uuid", (c) => c.references("catalog.workspaces.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("destination_url", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("tags", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn("link_id", "uuid", (c) => c.unique())
    .addColumn("vanity_domain_id", "uuid")
    .addColumn("vanity_url", "text")
    .addColumn("canonical_url", "text")
    .addColumn("design", "jsonb", (c) => c.notNull())
    .addColumn("utm", "jsonb")
    .addColumn("total_scans", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // One row per account that has ever created a code: creates lock it, so capacity checks serialize.
  await db.schema
    .createTable("catalog.account_capacity_locks")
    .addColumn("account_id", "uuid", (c) => c.primaryKey())
    .execute();
  await db.schema
    .createIndex("qr_codes_account_id_created_at_id")
    .on("catalog.qr_codes")
    .columns(["account_id", "created_at", "id"])
    .execute();
  await db.schema
    .createIndex("qr_codes_workspace_id_created_at_id")
    .on("catalog.qr_codes")
    .columns(["workspace_id", "created_at", "id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("catalog.account_capacity_locks").execute();
  await db.schema.dropTable("catalog.qr_codes").execute();
  await db.schema.dropTable("catalog.workspaces").execute();
}
