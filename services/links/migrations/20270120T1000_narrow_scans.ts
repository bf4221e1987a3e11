import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// A stored scan costs fewer bytes. links.scan_events takes the raw scans from links.scans: it keeps
// no account id (the link has it) and no time of its own: its id is a UUIDv7, whose first 48 bits
// are the scan's time, so the table is partitioned by ranges of ids (a day's ids lie between the
// day's first millisecond and the next day's) and the id alone is the key. The visitor key is kept
// as its 64-bit hash (hashtextextended(key, 0), which the visitor sketches already used), and the
// agent (device type, OS and browser) as the same hash of the three, spelled out once in
// links.scan_agents. links.scan_visitor_days takes the visitor-days, hashed the same way.
//
// Online, and through a rolling upgrade: links.scans and links.scan_day_visitors stay as they are,
// with their rows, and writers of the version before keep storing there until they are replaced;
// the partition manager drops their partitions as the retention passes. A scan made before
// links.scan_window.legacy_until (the end of their partitions; '-infinity' when they held nothing)
// is also looked up there, and they skip a scan or visitor-day the new tables already hold (the
// triggers below), so a batch sent again to either version is stored once and a visitor is counted
// once a day. Readers of visitors read links.visitor_days, both tables as one.

const DAY = "(date_trunc('day', now() at time zone 'UTC') at time zone 'UTC')";

export async function up(db: Kysely<any>): Promise<void> {
  await sql`lock table links.scan_window in exclusive mode`.execute(db);
  await sql`set local timezone = 'UTC'`.execute(db);
  const { rows } = await sql<{ until: string; held: boolean }>`
    select greatest(until, ${sql.raw(DAY)} + interval '1 day')::text as until,
      exists (select 1 from links.scans) or exists (select 1 from links.scan_day_visitors) as held
    from links.scan_window`.execute(db);
  const { until, held } = rows[0]!;

  await sql`create table links.scan_agents (
      code bigint primary key, device_type text not null, os text not null, browser text not null)`.execute(db);
  // Columns in this order leave no alignment padding: 80 bytes a row with its header.
  await sql`create table links.scan_events (
      id uuid not null, link_id uuid not null, visitor bigint not null, agent bigint not null,
      country text not null, referrer_host text not null,
      constraint scan_events_pkey primary key (id)
    ) partition by range (id)`.execute(db);
  await sql`create table links.scan_visitor_days (
      visitor bigint not null, link_id uuid not null, day date not null,
      constraint scan_visitor_days_pkey primary key (link_id, day, visitor)
    ) partition by range (day)`.execute(db);
  // Everything up to the old window's end in one partition each, so every scan the window admits
  // has a home before the service's manager first runs; it goes whole once past the retention.
  const suffix = until.slice(0, 10).replaceAll("-", "");
  await sql`create table ${sql.raw(`links.scan_events_until_${suffix}`)} partition of links.scan_events
    for values from (minvalue) to (${sql.lit(uuidAt(until))})`.execute(db);
  await sql`create table ${sql.raw(`links.scan_visitor_days_until_${suffix}`)} partition of links.scan_visitor_days
    for values from (minvalue) to (${sql.lit(until.slice(0, 10))})`.execute(db);

  await sql`alter table links.scan_window add column legacy_until timestamptz not null default '-infinity'`.execute(db);
  if (held) await sql`update links.scan_window set legacy_until = ${sql.lit(until)}::timestamptz`.execute(db);
  await sql`update links.scan_window set until = ${sql.lit(until)}::timestamptz`.execute(db);

  await sql`create view links.visitor_days as
      select link_id, day, visitor from links.scan_visitor_days
      union all
      select link_id, day, hashtextextended(visitor_key, 0) from links.scan_day_visitors`.execute(db);

  // Writers of the version before skip what this version stored: a scan sent again, or a visitor seen that day.
  await sql`create function links.skip_scan_stored_narrow() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from links.scan_events where id = new.id) then return null; end if;
      return new;
    end $$`.execute(db);
  await sql`create trigger skip_stored_narrow before insert on links.scans
    for each row execute function links.skip_scan_stored_narrow()`.execute(db);
  await sql`create function links.skip_visitor_day_stored_narrow() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from links.scan_visitor_days
          where link_id = new.link_id and day = new.day and visitor = hashtextextended(new.visitor_key, 0)) then
        return null;
      end if;
      return new;
    end $$`.execute(db);
  await sql`create trigger skip_stored_narrow before insert on links.scan_day_visitors
    for each row execute function links.skip_visitor_day_stored_narrow()`.execute(db);
}

/** The smallest UUIDv7 of a time ("2027-01-20 00:00:00+00"): its 48 bits of milliseconds, then zeros. */
function uuidAt(time: string): string {
  const hex = Date.parse(time.replace(" ", "T").replace(/\+00$/, "Z")).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

export async function down(db: Kysely<any>): Promise<void> {
  // The narrow rows cannot be widened (their visitor keys are hashes): going back keeps the wide tables' rows only.
  await sql`drop trigger skip_stored_narrow on links.scans`.execute(db);
  await sql`drop trigger skip_stored_narrow on links.scan_day_visitors`.execute(db);
  await sql`drop function links.skip_scan_stored_narrow(), links.skip_visitor_day_stored_narrow()`.execute(db);
  await sql`drop view links.visitor_days`.execute(db);
  await sql`alter table links.scan_window drop column legacy_until`.execute(db);
  await sql`drop table links.scan_events, links.scan_visitor_days, links.scan_agents`.execute(db);
}
