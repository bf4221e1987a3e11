import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// A link's breakdowns of a day in one row. links.scan_day_values kept a row per link, day, dimension
// and value: about 19 rows a link-day at 25 scans a link-day, 180 bytes each with its key, so 140
// bytes a scan kept for ever, mostly tuple headers and key entries. links.scan_day_rollups keeps
// a link-day's values in one array (`dimension_values`, each the dimension's one-letter code then
// the value) beside their scans (`value_scans`, in the same order), so a link-day pays for one header
// and one key.
//
// Online, and through a rolling upgrade: the rows move under a lock that lets readers of the version
// before read on and holds its folds until the end; links.scan_day_values then becomes a view of the
// new rows, so its readers still find every breakdown. Its folds fail on the view (ON CONFLICT
// cannot write through one) and leave their deltas, which readers count, for this version's folds.
// A later migration drops the view once no version before runs.

/** The one-letter codes of the dimensions in `dimension_values`. */
const CODES = sql`(values ('c', 'country'), ('d', 'device'), ('o', 'os'), ('b', 'browser'), ('r', 'referrer'), ('u', 'rule'))
  as code (code, dimension)`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`lock table links.scan_day_values in exclusive mode`.execute(db);
  // Columns in this order leave no alignment padding before the arrays.
  await sql`create table links.scan_day_rollups (
      link_id uuid not null, day date not null, dimension_values text[] not null, value_scans bigint[] not null,
      constraint scan_day_rollups_pkey primary key (link_id, day))`.execute(db);
  await sql`insert into links.scan_day_rollups (link_id, day, dimension_values, value_scans)
    select link_id, day, array_agg(code.code || value order by code.code, value), array_agg(scans order by code.code, value)
    from links.scan_day_values join ${CODES} using (dimension)
    group by link_id, day`.execute(db);
  await sql`drop table links.scan_day_values`.execute(db);
  await sql`create view links.scan_day_values as
    select kept.link_id, kept.day, code.dimension, substr(entry.dimension_value, 2) as value, entry.scans
    from links.scan_day_rollups as kept
    cross join lateral unnest(kept.dimension_values, kept.value_scans) as entry (dimension_value, scans)
    join ${CODES} on code.code = left(entry.dimension_value, 1)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`lock table links.scan_day_rollups in exclusive mode`.execute(db);
  await sql`alter view links.scan_day_values rename to scan_day_values_packed`.execute(db);
  await sql`create table links.scan_day_values (
      link_id uuid not null, day date not null, dimension text not null, value text not null, scans bigint not null,
      constraint scan_day_values_pkey primary key (link_id, day, dimension, value) include (scans))`.execute(db);
  await sql`insert into links.scan_day_values select * from links.scan_day_values_packed`.execute(db);
  await sql`drop view links.scan_day_values_packed`.execute(db);
  await sql`drop table links.scan_day_rollups`.execute(db);
}
