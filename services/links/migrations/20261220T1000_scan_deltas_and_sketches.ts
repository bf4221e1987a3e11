import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// links.scan_deltas: what each batch of scans adds to the rollups (scan_totals, scan_days,
// scan_day_values), appended without a key, so batches written at once never wait on each other's
// rows; a folder moves them into the rollups later, and readers add what is not folded yet. A row
// with dimension '' holds a link's scans and new visitors of a day; the others one value of one
// dimension.
//
// links.scan_day_sketches: a HyperLogLog sketch of a link's visitors on one day, built once a day is
// over, so distinct visitors over long ranges merge 366 small sketches instead of counting millions of
// rows. `visitors` is the day's distinct visitors when it was built: the sketch is only used while
// it still equals scan_days.unique_scans.
//
// scan_day_values' key carries its count (INCLUDE), so a year of a busy link's breakdowns is read
// from the index alone, a few hundred pages in key order, instead of one heap page per row.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table links.scan_day_values drop constraint scan_day_values_pkey`.execute(db);
  await sql`alter table links.scan_day_values add constraint scan_day_values_pkey primary key (link_id, day, dimension, value) include (scans)`.execute(
    db,
  );
  await db.schema
    .createTable("links.scan_deltas")
    .addColumn("link_id", "uuid", (c) => c.notNull())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("day", "date", (c) => c.notNull())
    .addColumn("dimension", "text", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("scans", "bigint", (c) => c.notNull())
    .addColumn("visitors", "bigint", (c) => c.notNull())
    .execute();
  // A queue: every row is deleted within seconds, so its dead rows are vacuumed as soon as there are many.
  await sql`alter table links.scan_deltas set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000, autovacuum_vacuum_cost_delay = 0)`.execute(
    db,
  );
  await db.schema
    .createTable("links.scan_day_sketches")
    .addColumn("link_id", "uuid", (c) => c.notNull())
    .addColumn("day", "date", (c) => c.notNull())
    .addColumn("visitors", "bigint", (c) => c.notNull())
    .addColumn("registers", "bytea", (c) => c.notNull())
    .addPrimaryKeyConstraint("scan_day_sketches_pkey", ["link_id", "day"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table links.scan_day_values drop constraint scan_day_values_pkey`.execute(db);
  await sql`alter table links.scan_day_values add constraint scan_day_values_pkey primary key (link_id, day, dimension, value)`.execute(
    db,
  );
  await db.schema.dropTable("links.scan_day_sketches").execute();
  await db.schema.dropTable("links.scan_deltas").execute();
}
