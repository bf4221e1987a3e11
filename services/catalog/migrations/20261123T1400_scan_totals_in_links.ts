import type { Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
// Scans are counted by the links service, which records them; a copy here would only go stale.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("catalog.qr_codes").dropColumn("total_scans").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("catalog.qr_codes")
    .addColumn("total_scans", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
}
