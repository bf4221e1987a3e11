import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// Whether the cluster serves a custom domain, as the domain operator last reported it (route
// admitted, certificate ready and its expiry, the reason and message of its Ready condition). Every
// column is null until the first report: then all of them are set together (certificate_expires_at
// may stay null while no certificate was issued).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("links.domains")
    .addColumn("serving", "boolean")
    .addColumn("route_admitted", "boolean")
    .addColumn("certificate_ready", "boolean")
    .addColumn("certificate_expires_at", sql`timestamptz(3)`)
    .addColumn("serving_reason", "text")
    .addColumn("serving_message", "text")
    .addColumn("serving_reported_at", sql`timestamptz(3)`)
    .execute();
  await db.schema
    .alterTable("links.domains")
    .addCheckConstraint(
      "domains_serving_reported_together",
      sql`(serving_reported_at is null and serving is null and route_admitted is null and certificate_ready is null
           and certificate_expires_at is null and serving_reason is null and serving_message is null)
       or (serving_reported_at is not null and serving is not null and route_admitted is not null
           and certificate_ready is not null and serving_reason is not null and serving_message is not null)`,
    )
    .execute();
  // The domain watch looks hostnames up among removed domains too, newest removal first.
  await db.schema
    .createIndex("domains_hostname_removed")
    .on("links.domains")
    .columns(["hostname", "deleted_at desc"])
    .where(sql.ref("deleted_at"), "is not", null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("links.domains_hostname_removed").execute();
  await db.schema.alterTable("links.domains").dropConstraint("domains_serving_reported_together").execute();
  await db.schema
    .alterTable("links.domains")
    .dropColumn("serving")
    .dropColumn("route_admitted")
    .dropColumn("certificate_ready")
    .dropColumn("certificate_expires_at")
    .dropColumn("serving_reason")
    .dropColumn("serving_message")
    .dropColumn("serving_reported_at")
    .execute();
}
