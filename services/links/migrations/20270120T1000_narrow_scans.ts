import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// A stored scan costs fewer bytes. links.scans keeps no account id (the link has it) and no time of
// its own: its id is a UUIDv7, whose first 48 bits are the scan's time, so the table is partitioned
// by ranges of ids (a day's ids lie between the day's first millisecond and the next day's) and the
// id alone is the key. The visitor key is kept as its 64-bit hash (hashtextextended(key, 0), which
// the visitor sketches already used), and the agent (device type, OS and browser) as the same hash of
// the three, spelled out once in links.scan_agents. links.scan_day_visitors keeps the hash too.
//
// Online, no row copied: the tables as they were are renamed *_wide, with their partitions, and
// keep their rows until the partition manager drops them past the retention. Until then a scan made
// before links.scan_window.legacy_until (the end of the old partitions; '-infinity' when they held
// nothing) is also looked up there, so a batch stored before this migration and sent again after it
// is still recognised, and a visitor already seen that day is not counted again. Readers of visitors
// read links.visitor_days, both tables as one. Writers of the version before fail on the new tables
// and keep their scans in memory or the spool until they are replaced by this version, which stores them.

const DAY = "(date_trunc('day', now() at time zone 'UTC') at time zone 'UTC')";

export async function up(db: Kysely<any>): Promise<void> {
  await sql`lock table links.scans, links.scan_day_visitors, links.scan_window in access exclusive mode`.execute(db);
  await sql`set local timezone = 'UTC'`.execute(db);
  const { rows } = await sql<{ until: string; held: boolean }>`
    select greatest(until, ${sql.raw(DAY)} + interval '1 day')::text as until,
      exists (select 1 from links.scans) or exists (select 1 from links.scan_day_visitors) as held
    from links.scan_window`.execute(db);
  const { until, held } = rows[0]!;

  for (const table of ["scans", "scan_day_visitors"]) {
    const { rows: children } = await sql<{ name: string }>`
      select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = ${`links.${table}`}::regclass`.execute(db);
    for (const { name } of children) {
      const renamed = `${table}_wide${name.slice(table.length)}`;
      await sql`alter table ${sql.raw(`links.${name}`)} rename to ${sql.raw(renamed)}`.execute(db);
    }
    await sql`alter table ${sql.raw(`links.${table}`)} rename to ${sql.raw(`${table}_wide`)}`.execute(db);
    await sql`alter table ${sql.raw(`links.${table}_wide`)} rename constraint ${sql.raw(`${table}_pkey`)} to ${sql.raw(`${table}_wide_pkey`)}`.execute(
      db,
    );
  }

  await sql`create table links.scan_agents (
      code bigint primary key, device_type text not null, os text not null, browser text not null)`.execute(db);
  // Columns in this order leave no alignment padding: 80 bytes a row with its header.
  await sql`create table links.scans (
      id uuid not null, link_id uuid not null, visitor bigint not null, agent bigint not null,
      country text not null, referrer_host text not null,
      constraint scans_pkey primary key (id)
    ) partition by range (id)`.execute(db);
  await sql`create table links.scan_day_visitors (
      visitor bigint not null, link_id uuid not null, day date not null,
      constraint scan_day_visitors_pkey primary key (link_id, day, visitor)
    ) partition by range (day)`.execute(db);
  // Everything up to the old window's end in one partition each, so every scan the window admits
  // has a home before the service's manager first runs; it goes whole once past the retention.
  const suffix = until.slice(0, 10).replaceAll("-", "");
  await sql`create table ${sql.raw(`links.scans_until_${suffix}`)} partition of links.scans
    for values from (minvalue) to (${sql.lit(uuidAt(until))})`.execute(db);
  await sql`create table ${sql.raw(`links.scan_day_visitors_until_${suffix}`)} partition of links.scan_day_visitors
    for values from (minvalue) to (${sql.lit(until.slice(0, 10))})`.execute(db);

  await sql`alter table links.scan_window add column legacy_until timestamptz not null default '-infinity'`.execute(db);
  if (held) await sql`update links.scan_window set legacy_until = ${sql.lit(until)}::timestamptz`.execute(db);
  await sql`update links.scan_window set until = ${sql.lit(until)}::timestamptz`.execute(db);

  await sql`create view links.visitor_days as
      select link_id, day, visitor from links.scan_day_visitors
      union all
      select link_id, day, hashtextextended(visitor_key, 0) from links.scan_day_visitors_wide`.execute(db);
}

/** The smallest UUIDv7 of a time ("2027-01-20 00:00:00+00"): its 48 bits of milliseconds, then zeros. */
function uuidAt(time: string): string {
  const hex = Date.parse(time.replace(" ", "T").replace(/\+00$/, "Z")).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

export async function down(db: Kysely<any>): Promise<void> {
  // The narrow rows cannot be widened (their visitor keys are hashes): going back keeps the wide tables' rows only.
  await sql`drop view links.visitor_days`.execute(db);
  await sql`alter table links.scan_window drop column legacy_until`.execute(db);
  await sql`drop table links.scans, links.scan_day_visitors, links.scan_agents`.execute(db);
  for (const table of ["scans", "scan_day_visitors"]) {
    const { rows: children } = await sql<{ name: string }>`
      select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = ${`links.${table}_wide`}::regclass`.execute(db);
    await sql`alter table ${sql.raw(`links.${table}_wide`)} rename constraint ${sql.raw(`${table}_wide_pkey`)} to ${sql.raw(`${table}_pkey`)}`.execute(
      db,
    );
    await sql`alter table ${sql.raw(`links.${table}_wide`)} rename to ${sql.raw(table)}`.execute(db);
    for (const { name } of children) {
      await sql`alter table ${sql.raw(`links.${name}`)} rename to ${sql.raw(`${table}${name.slice(`${table}_wide`.length)}`)}`.execute(
        db,
      );
    }
  }
}
