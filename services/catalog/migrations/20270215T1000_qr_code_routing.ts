import type { Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// A QR code shows its link's routing (issue 35) as the links service last answered it: rules with their
// ids, lifetime, scan limit, fallback URL and whether a password is set (never the password or its hash),
// as the proto JSON of qrplatform.links.v1.LinkRouting. Kept here as destination_url is, so that reads
// and lists cost no call to the links service; null means no routing.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("catalog.qr_codes").addColumn("routing", "jsonb").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("catalog.qr_codes").dropColumn("routing").execute();
}
