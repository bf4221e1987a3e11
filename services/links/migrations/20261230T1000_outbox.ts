import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// The links service's transactional outbox: changes that webhook endpoints hear about (scans folded
// into the rollups, domains verified) are written here in the same transaction as the change, and
// removed once the catalog, which delivers webhooks, has stored them (OutboxService).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("links.outbox_events")
    .addColumn("position", "bigserial", (c) => c.primaryKey())
    .addColumn("id", "uuid", (c) => c.notNull().unique().defaultTo(sql`gen_random_uuid()`))
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull().check(sql`type in ('link.scanned', 'domain.verified')`))
    .addColumn("link_id", "uuid")
    .addColumn("scan_count", "bigint")
    .addColumn("domain_id", "uuid")
    .addColumn("hostname", "text")
    .addColumn("occurred_at", sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("links.outbox_events").execute();
}
