import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// A link's rollups of a day in one row. links.scan_days kept a row per link and day, and
// links.scan_day_values a row per link, day, dimension and value: about 20 rows a link-day at 25
// scans a link-day, each paying a tuple header and a key entry, so 146 bytes a scan kept for ever.
// links.scan_day_rollups keeps a link-day's scans and distinct visitors, and its breakdowns as two
// arrays: its values (`dimension_values`, each the dimension's one-letter code then the value) and
// their scans (`value_scans`, in the same order), so a link-day pays for one header and one key.
//
// Online, and through a rolling upgrade: the rows move under a lock that lets readers of the version
// before read on and holds its folds until the end; links.scan_days and links.scan_day_values then
// become views of the new rows, so its readers still find every count. Its folds fail on the views
// (ON CONFLICT cannot write through one) and leave their deltas, which readers count, for this
// version's folds. A later migration drops the views once no version before runs.

/** The one-letter codes of the dimensions in `dimension_values`. */
const CODES = sql`(values ('c', 'country'), ('d', 'device'), ('o', 'os'), ('b', 'browser'), ('r', 'referrer'), ('u', 'rule'))
  as code (code, dimension)`;

export async function up(db: Kysely<any>): Promise<void> {
  // In the order the version before's folds write them, so a fold under way finishes first.
  await sql`lock table links.scan_days, links.scan_day_values in exclusive mode`.execute(db);
  await sql`create table links.scan_day_rollups (
      link_id uuid not null, day date not null, scans bigint not null, unique_scans bigint not null,
      dimension_values text[] not null, value_scans bigint[] not null,
      constraint scan_day_rollups_pkey primary key (link_id, day))`.execute(db);
  await sql`insert into links.scan_day_rollups (link_id, day, scans, unique_scans, dimension_values, value_scans)
    select link_id, day, coalesce(days.scans, 0), coalesce(days.unique_scans, 0),
      coalesce(breakdowns.dimension_values, '{}'), coalesce(breakdowns.value_scans, '{}')
    from links.scan_days as days
    full join (
      select link_id, day, array_agg(code.code || value order by code.code, value) as dimension_values,
        array_agg(scans order by code.code, value) as value_scans
      from links.scan_day_values join ${CODES} using (dimension)
      group by link_id, day
    ) as breakdowns using (link_id, day)`.execute(db);
  await sql`drop table links.scan_days, links.scan_day_values`.execute(db);
  await sql`create view links.scan_days as
    select link_id, day, scans, unique_scans from links.scan_day_rollups`.execute(db);
  await sql`create view links.scan_day_values as
    select kept.link_id, kept.day, code.dimension, substr(entry.dimension_value, 2) as value, entry.scans
    from links.scan_day_rollups as kept
    cross join lateral unnest(kept.dimension_values, kept.value_scans) as entry (dimension_value, scans)
    join ${CODES} on code.code = left(entry.dimension_value, 1)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`lock table links.scan_day_rollups in exclusive mode`.execute(db);
  await sql`alter view links.scan_days rename to scan_days_packed`.execute(db);
  await sql`alter view links.scan_day_values rename to scan_day_values_packed`.execute(db);
  await sql`create table links.scan_days (
      link_id uuid not null, day date not null, scans bigint not null, unique_scans bigint not null,
      constraint scan_days_pkey primary key (link_id, day))`.execute(db);
  await sql`create table links.scan_day_values (
      link_id uuid not null, day date not null, dimension text not null, value text not null, scans bigint not null,
      constraint scan_day_values_pkey primary key (link_id, day, dimension, value) include (scans))`.execute(db);
  await sql`insert into links.scan_days select * from links.scan_days_packed`.execute(db);
  await sql`insert into links.scan_day_values select * from links.scan_day_values_packed`.execute(db);
  await sql`drop view links.scan_days_packed, links.scan_day_values_packed`.execute(db);
  await sql`drop table links.scan_day_rollups`.execute(db);
}
