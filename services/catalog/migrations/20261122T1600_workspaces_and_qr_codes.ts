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

  await db.schema
    .createTable("catalog.qr_codes")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("workspace_id", "uuid", (c) => c.references("catalog.workspaces.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("destination_url", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("tags", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn("link_id", "uuid", (c) => c.notNull().unique())
    .addColumn("vanity_url", "text", (c) => c.notNull())
    .addColumn("canonical_url", "text", (c) => c.notNull())
    .addColumn("design", "jsonb", (c) => c.notNull())
    .addColumn("utm", "jsonb", (c) => c.notNull())
    .addColumn("created_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
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
  await db.schema.dropTable("catalog.qr_codes").execute();
  await db.schema.dropTable("catalog.workspaces").execute();
}
