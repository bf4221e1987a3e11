import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
// A create that carries a client's Idempotency-Key records it on the code it makes, in the transaction
// that reserves the code, so a retry of that create finds the code however the first answer was lost
// (an edge killed after the commit, a timeout whose write went through). One code per key and account.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("catalog.qr_codes")
    .addColumn("idempotency_key", "text")
    .addColumn("idempotency_fingerprint", "bytea")
    .execute();
  await db.schema
    .createIndex("qr_codes_account_id_idempotency_key")
    .on("catalog.qr_codes")
    .columns(["account_id", "idempotency_key"])
    .unique()
    .where(sql.ref("idempotency_key"), "is not", null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("catalog.qr_codes_account_id_idempotency_key").execute();
  await db.schema
    .alterTable("catalog.qr_codes")
    .dropColumn("idempotency_key")
    .dropColumn("idempotency_fingerprint")
    .execute();
}
