import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// links.scan_deltas keeps one row per combination of values a batch saw (link, day, country, device,
// OS, browser, referrer) instead of one row per link and day plus one per dimension and value: about
// one row per scan or fewer, where there were six. The folder and the readers spread a row over the
// five breakdowns themselves. `visitors` is the new visitor-days of the row's link and day in its
// batch, written on one of its rows.
//
// links.scans loses its (link_id, scanned_at) index: nothing reads the raw scans by link (analytics
// reads the rollups), and a batch of scans over many links dirtied one leaf of it per link.
//
// The deltas in the old shape are folded into the rollups first, under the folders' advisory lock,
// so nothing is counted twice or lost while the table is replaced.

const FOLD_LOCK = 0x71720001;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`select pg_advisory_xact_lock(${FOLD_LOCK})`.execute(db);
  await sql`
    with folded as (delete from links.scan_deltas returning *),
    totals as (
      insert into links.scan_totals (link_id, account_id, scans)
      select link_id, account_id, sum(scans) from folded where dimension = '' group by 1, 2
      on conflict (link_id) do update set scans = scan_totals.scans + excluded.scans
    ),
    days as (
      insert into links.scan_days (link_id, day, scans, unique_scans)
      select link_id, day, sum(scans), sum(visitors) from folded where dimension = '' group by 1, 2
      on conflict (link_id, day) do update
        set scans = scan_days.scans + excluded.scans, unique_scans = scan_days.unique_scans + excluded.unique_scans
    )
    insert into links.scan_day_values (link_id, day, dimension, value, scans)
    select link_id, day, dimension, value, sum(scans) from folded where dimension <> '' group by 1, 2, 3, 4
    on conflict (link_id, day, dimension, value) do update set scans = scan_day_values.scans + excluded.scans`.execute(
    db,
  );
  await db.schema.dropTable("links.scan_deltas").execute();
  await db.schema
    .createTable("links.scan_deltas")
    .addColumn("link_id", "uuid", (c) => c.notNull())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("day", "date", (c) => c.notNull())
    .addColumn("country", "text", (c) => c.notNull())
    .addColumn("device_type", "text", (c) => c.notNull())
    .addColumn("os", "text", (c) => c.notNull())
    .addColumn("browser", "text", (c) => c.notNull())
    .addColumn("referrer_host", "text", (c) => c.notNull())
    .addColumn("scans", "bigint", (c) => c.notNull())
    .addColumn("visitors", "bigint", (c) => c.notNull())
    .execute();
  await sql`alter table links.scan_deltas set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000, autovacuum_vacuum_cost_delay = 0)`.execute(
    db,
  );
  await sql`drop index links.scans_link_id_scanned_at`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`select pg_advisory_xact_lock(${FOLD_LOCK})`.execute(db);
  await sql`
    with folded as (delete from links.scan_deltas returning *),
    totals as (
      insert into links.scan_totals (link_id, account_id, scans)
      select link_id, account_id, sum(scans) from folded group by 1, 2
      on conflict (link_id) do update set scans = scan_totals.scans + excluded.scans
    ),
    days as (
      insert into links.scan_days (link_id, day, scans, unique_scans)
      select link_id, day, sum(scans), sum(visitors) from folded group by 1, 2
      on conflict (link_id, day) do update
        set scans = scan_days.scans + excluded.scans, unique_scans = scan_days.unique_scans + excluded.unique_scans
    )
    insert into links.scan_day_values (link_id, day, dimension, value, scans)
    select link_id, day, d.dimension, d.value, sum(scans)
    from folded, lateral (values ('country', country), ('device', device_type), ('os', os), ('browser', browser), ('referrer', referrer_host)) as d (dimension, value)
    group by 1, 2, 3, 4
    on conflict (link_id, day, dimension, value) do update set scans = scan_day_values.scans + excluded.scans`.execute(
    db,
  );
  await db.schema.dropTable("links.scan_deltas").execute();
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
  await sql`alter table links.scan_deltas set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000, autovacuum_vacuum_cost_delay = 0)`.execute(
    db,
  );
  await db.schema
    .createIndex("scans_link_id_scanned_at")
    .on("links.scans")
    .columns(["link_id", "scanned_at"])
    .execute();
}
