import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
// Workspace and webhook-endpoint creates record a client's Idempotency-Key on what they make, as QR-code
// creates do, so a retry whose first answer was lost (a timeout whose write went through, an edge that
// died) finds that workspace or endpoint instead of making a second one. One per key and account.

const TABLES = ["workspaces", "webhook_endpoints"] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await db.schema
      .alterTable(`catalog.${table}`)
      .addColumn("idempotency_key", "text")
      .addColumn("idempotency_fingerprint", "bytea")
      .execute();
    await db.schema
      .createIndex(`${table}_account_id_idempotency_key`)
      .on(`catalog.${table}`)
      .columns(["account_id", "idempotency_key"])
      .unique()
      .where(sql.ref("idempotency_key"), "is not", null)
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await db.schema.dropIndex(`catalog.${table}_account_id_idempotency_key`).execute();
    await db.schema
      .alterTable(`catalog.${table}`)
      .dropColumn("idempotency_key")
      .dropColumn("idempotency_fingerprint")
      .execute();
  }
}
