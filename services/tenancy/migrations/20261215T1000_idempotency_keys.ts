import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
// One row per Idempotency-Key of an account: the request that holds it (its fingerprint and, while it
// runs, its claim and lease) and, once it finished, the response to replay.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("tenancy.idempotency_keys")
    .addColumn("account_id", "uuid", (c) => c.notNull().references("tenancy.accounts.id").onDelete("cascade"))
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("fingerprint", "bytea", (c) => c.notNull())
    .addColumn("claim_id", "uuid", (c) => c.notNull())
    .addColumn("lease_expires_at", sql`timestamptz(3)`, (c) => c.notNull())
    .addColumn("response_status", "integer")
    .addColumn("response_headers", "jsonb")
    .addColumn("response_body", "bytea")
    .addColumn("created_at", sql`timestamptz(3)`, (c) => c.notNull())
    .addColumn("expires_at", sql`timestamptz(3)`, (c) => c.notNull())
    .addPrimaryKeyConstraint("idempotency_keys_pkey", ["account_id", "key"])
    .execute();
  await db.schema
    .createIndex("idempotency_keys_expires_at")
    .on("tenancy.idempotency_keys")
    .column("expires_at")
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("tenancy.idempotency_keys").execute();
}
