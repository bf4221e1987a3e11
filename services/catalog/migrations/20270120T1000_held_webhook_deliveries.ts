import type { Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// Events raised while an endpoint is disabled are held as pending deliveries, delivered once it is
// enabled again; beyond a bound per endpoint the oldest held ones are dropped, and counted here so
// the endpoint says how many it lost.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("catalog.webhook_endpoints")
    .addColumn("held_deliveries_dropped", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("catalog.webhook_endpoints").dropColumn("held_deliveries_dropped").execute();
}
