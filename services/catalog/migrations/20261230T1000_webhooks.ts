import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// Signed webhooks (docs/adr/0017-signed-webhooks.md). Endpoints belong to an account. An event is
// written with one delivery per subscribed endpoint in the transaction of the change it describes,
// so webhook_deliveries is the catalog's own outbox; events the links service recorded are relayed
// in (relayed_outbox_events remembers which, so a relay repeated after a crash adds nothing), and
// scans are added up per QR code and period (scan_tallies) before they become events.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("catalog.webhook_endpoints")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("event_types", sql`text[]`, (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('enabled', 'disabled')`))
    .addColumn("disabled_reason", "text")
    .addColumn("disabled_message", "text")
    .addColumn("secret", "text", (c) => c.notNull())
    .addColumn("previous_secret", "text")
    .addColumn("previous_secret_expires_at", sql`timestamptz(3)`)
    .addColumn("last_success_at", sql`timestamptz(3)`)
    .addColumn("created_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("webhook_endpoints_account_id_created_at_id")
    .on("catalog.webhook_endpoints")
    .columns(["account_id", "created_at", "id"])
    .execute();

  await db.schema
    .createTable("catalog.webhook_events")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    // The request body exactly as every endpoint receives it (and as it is signed).
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("created_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("webhook_events_created_at").on("catalog.webhook_events").column("created_at").execute();

  await db.schema
    .createTable("catalog.webhook_deliveries")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("endpoint_id", "uuid", (c) => c.notNull().references("catalog.webhook_endpoints.id").onDelete("cascade"))
    .addColumn("event_id", "uuid", (c) => c.notNull().references("catalog.webhook_events.id").onDelete("cascade"))
    .addColumn("event_type", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('pending', 'succeeded', 'failed')`))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    // While pending: when the next attempt is due, or, during an attempt, when its lease ends.
    .addColumn("next_attempt_at", sql`timestamptz(3)`)
    .addColumn("last_attempt_at", sql`timestamptz(3)`)
    .addColumn("last_response_status", "integer")
    .addColumn("last_error", "text")
    .addColumn("created_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("webhook_deliveries_endpoint_id_event_id", ["endpoint_id", "event_id"])
    .execute();
  await db.schema
    .createIndex("webhook_deliveries_due")
    .on("catalog.webhook_deliveries")
    .column("next_attempt_at")
    .where(sql.ref("status"), "=", "pending")
    .execute();
  await db.schema
    .createIndex("webhook_deliveries_endpoint_id_created_at_id")
    .on("catalog.webhook_deliveries")
    .columns(["endpoint_id", "created_at", "id"])
    .execute();
  await db.schema
    .createIndex("webhook_deliveries_event_id")
    .on("catalog.webhook_deliveries")
    .column("event_id")
    .execute();

  await db.schema
    .createTable("catalog.relayed_outbox_events")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("relayed_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable("catalog.scan_tallies")
    .addColumn("qr_code_id", "uuid", (c) => c.notNull())
    .addColumn("period_start", sql`timestamptz(3)`, (c) => c.notNull())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("scans", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("scan_tallies_pkey", ["qr_code_id", "period_start"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    "scan_tallies",
    "relayed_outbox_events",
    "webhook_deliveries",
    "webhook_events",
    "webhook_endpoints",
  ]) {
    await db.schema.dropTable(`catalog.${table}`).execute();
  }
}
