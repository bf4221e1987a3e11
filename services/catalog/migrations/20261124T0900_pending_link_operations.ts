import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
// A QR code and its short link live in two services. A change to both is recorded here before the
// link is touched (pending_operation, pending_since), so a crash at any point leaves a row that says
// what was under way, and the reconciler can finish or undo it.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("catalog.qr_codes")
    .addColumn("pending_operation", "text", (c) => c.check(sql`pending_operation in ('create', 'update', 'delete')`))
    .addColumn("pending_since", sql`timestamptz(3)`)
    .execute();
  // Reservations left by creates that never finished: the reconciler discards them.
  await sql`update catalog.qr_codes set pending_operation = 'create', pending_since = created_at where link_id is null`.execute(
    db,
  );
  await db.schema
    .createIndex("qr_codes_pending_since")
    .on("catalog.qr_codes")
    .column("pending_since")
    .where(sql.ref("pending_operation"), "is not", null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("catalog.qr_codes_pending_since").execute();
  await db.schema.alterTable("catalog.qr_codes").dropColumn("pending_operation").dropColumn("pending_since").execute();
}
