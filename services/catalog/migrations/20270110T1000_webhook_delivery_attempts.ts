import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// Every recorded attempt of a webhook delivery, so the delivery log shows how each one went, not only
// the last (docs/adr/0017-signed-webhooks.md). Written in the transaction that records the attempt's
// outcome on the delivery, and deleted with it.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("catalog.webhook_delivery_attempts")
    .addColumn("delivery_id", "uuid", (c) =>
      c.notNull().references("catalog.webhook_deliveries.id").onDelete("cascade"),
    )
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("attempted_at", sql`timestamptz(3)`, (c) => c.notNull())
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addColumn("response_status", "integer")
    .addColumn("error", "text")
    .addPrimaryKeyConstraint("webhook_delivery_attempts_pkey", ["delivery_id", "attempt"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("catalog.webhook_delivery_attempts").execute();
}
