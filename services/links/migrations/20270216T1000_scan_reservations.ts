import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// The exact scan limit of dynamic codes (ADR 0018): one row per link with a limit, counting the counted
// scans that were let through to a destination. A redirector takes a place with one conditional
// upsert before it answers, so however many redirectors scan one link at once, no more than the limit
// are let through; a redirector that dies between taking a place and answering leaves one fewer.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("links.scan_reservations")
    .addColumn("link_id", "uuid", (c) => c.primaryKey().references("links.links.id").onDelete("cascade"))
    .addColumn("reserved", "integer", (c) => c.notNull().check(sql`reserved >= 0`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("links.scan_reservations").execute();
}
