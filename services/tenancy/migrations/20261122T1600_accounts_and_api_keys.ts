import { sql, type Kysely } from "kysely";

// Timestamps are timestamptz(3): millisecond precision, exactly what a JS Date holds, so keyset
// pagination on created_at compares equal values as equal.
// Frozen: this file describes the schema as it was on this date and imports no application code.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("tenancy.accounts")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("slug", "text", (c) => c.notNull().unique())
    .addColumn("subscription_tier", "text", (c) => c.notNull())
    .addColumn("subscription_status", "text", (c) => c.notNull())
    .addColumn("addons", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn("hourly_request_limit_override", "bigint")
    .addColumn("created_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("accounts_created_at_id").on("tenancy.accounts").columns(["created_at", "id"]).execute();

  await db.schema
    .createTable("tenancy.api_keys")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("tenancy.accounts.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("secret_sha256", "text", (c) => c.notNull().unique())
    .addColumn("display_prefix", "text", (c) => c.notNull())
    .addColumn("scopes", sql`text[]`, (c) => c.notNull())
    .addColumn("created_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", sql`timestamptz(3)`)
    .addColumn("revoked_at", sql`timestamptz(3)`)
    .execute();
  await db.schema.createIndex("api_keys_account_id").on("tenancy.api_keys").column("account_id").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("tenancy.api_keys").execute();
  await db.schema.dropTable("tenancy.accounts").execute();
}
