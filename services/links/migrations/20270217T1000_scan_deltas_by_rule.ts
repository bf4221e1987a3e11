import type { Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// Analytics per routing rule (issue 35, ADR 0018): a batch's deltas are grouped by the rule that
// decided each scan too, `rule` holding the rule's id, "<rule id>/<variant>" for a split rule's
// variant, or "" when no rule decided; folding adds a `rule` breakdown to links.scan_day_values for
// the non-empty ones. The raw rows (links.scan_events) do not change: the rollups are all that
// analytics per rule reads. A constant default is a change of the catalog only, whatever the table holds.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("links.scan_deltas")
    .addColumn("rule", "text", (c) => c.notNull().defaultTo(""))
    .execute();
}

// Deltas not folded yet forget which rule decided them; their counts stay.
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("links.scan_deltas").dropColumn("rule").execute();
}
