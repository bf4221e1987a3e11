import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// A stored scan costs fewer bytes, and a link's raw scans can be read without reading everyone's.
// links.raw_scans takes the raw scans from links.scan_events and the visitor-days from
// links.scan_visitor_days, in four int8 columns and one index:
// - `link`: the link's number, links.links.number (a sequence), 8 bytes where its uuid took 16;
// - `key`: the scan's time in milliseconds times 2^20 plus 20 bits of its id (the bits after the
//   UUIDv7's version digit: 12 of rand_a, then the 8 after the variant digit), so a scan sent again
//   gets the same key; the table is partitioned by day on it;
// - `visitor`: hashtextextended(visitor key, 0), as before;
// - `context`: hashtextextended of (device type, OS, browser, country, referrer host) as a row,
//   spelled out once in links.scan_contexts.
// 56 bytes a row with its header, no padding. The one index, unique (link, visitor, key), deduplicates
// a batch sent again, finds a visitor's other scans of a day (so a late scan of a closed day is a
// link-day's new visitor when there are none) and serves a link's hourly and distinct-visitor reads.
// There is no table of visitor-days: the partition manager counts each day's visitors once it is over
// (links.scan_day_close.closed_until, links.scan_window.recounted_until).
//
// Online, and through a rolling upgrade: links.scan_events and links.scan_visitor_days stay as they
// are, with their rows, and writers of the version before keep storing there until they are
// replaced; the partition manager drops their partitions as the retention passes. A scan made before
// links.scan_window.narrow_until (the end of their partitions; '-infinity' when they held nothing) is
// also looked up there, and they skip a scan or visitor-day links.raw_scans already holds (the
// triggers below), so a batch sent again to either version is stored once and a visitor is counted
// once a day. links.visitor_days, which the version before reads, takes in links.raw_scans too.
//
// links.links.number: the column is added without a default (no rewrite), new rows take the
// sequence, old rows are numbered in place, then the unique index is built.

const DAY = "(date_trunc('day', now() at time zone 'UTC') at time zone 'UTC')";
/** The key of a UUIDv7 scan id, as this version's writer computes it. */
const KEY_OF_ID = `(('x' || left(replace(new.id::text, '-', ''), 12))::bit(48)::bigint * 1048576
  + ('x' || substr(replace(new.id::text, '-', ''), 14, 3) || substr(replace(new.id::text, '-', ''), 18, 2))::bit(20)::bigint)`;
/** The first key of a day (a date). */
const keyOfDay = (day: string) => `((${day} - date '1970-01-01')::bigint * 86400000 * 1048576)`;

export async function up(db: Kysely<any>): Promise<void> {
  // Adding the column locks the links whole until commit (redirects wait for it): taken first, in the
  // order the version before's writers take them, so neither waits on the other in a cycle.
  await sql`lock table links.links in access exclusive mode`.execute(db);
  await sql`lock table links.scan_window in exclusive mode`.execute(db);
  await sql`set local timezone = 'UTC'`.execute(db);
  const { rows } = await sql<{ until: string; today: string; held: boolean }>`
    select greatest(until, ${sql.raw(DAY)} + interval '1 day')::text as until, to_char(${sql.raw(DAY)}, 'YYYY-MM-DD') as today,
      exists (select 1 from links.scan_events) or exists (select 1 from links.scan_visitor_days) as held
    from links.scan_window`.execute(db);
  const { until, today, held } = rows[0]!;

  await sql`create sequence links.link_numbers as bigint`.execute(db);
  await sql`alter table links.links add column number bigint`.execute(db);
  await sql`alter table links.links alter column number set default nextval('links.link_numbers')`.execute(db);
  await sql`alter sequence links.link_numbers owned by links.links.number`.execute(db);
  await sql`update links.links set number = nextval('links.link_numbers') where number is null`.execute(db);
  await sql`create unique index links_number_key on links.links (number)`.execute(db);

  await sql`create table links.scan_contexts (
      code bigint primary key, device_type text not null, os text not null, browser text not null,
      country text not null, referrer_host text not null)`.execute(db);
  await sql`create table links.raw_scans (
      link bigint not null, key bigint not null, visitor bigint not null, context bigint not null
    ) partition by range (key)`.execute(db);
  await sql`create unique index raw_scans_link_visitor_key on links.raw_scans (link, visitor, key)`.execute(db);
  // Everything up to the window's end in one partition, so every scan the window admits has a home
  // before the service's manager first runs; it goes whole once past the retention.
  const untilMs = Date.parse(until.replace(" ", "T").replace(/\+00$/, "Z"));
  await sql`create table ${sql.raw(`links.raw_scans_until_${until.slice(0, 10).replaceAll("-", "")}`)} partition of links.raw_scans
    for values from (minvalue) to (${sql.lit((BigInt(untilMs) * 1048576n).toString())})`.execute(db);

  // Scans before narrow_until are also looked up in the tables of the version before. Writers count
  // the distinct visitors of days before links.scan_day_close.closed_until themselves and leave later
  // days' to their close; days before recounted_until have had theirs recounted from the raw scans.
  // Today is the first day a writer leaves uncounted, so it is the first to close. closed_until has
  // a row of its own, which each batch holds FOR SHARE: the partition manager's updates of
  // links.scan_window then never wait for batches.
  await sql`alter table links.scan_window add column narrow_until timestamptz not null default '-infinity',
    add column recounted_until date`.execute(db);
  await sql`create table links.scan_day_close (closed_until date not null)`.execute(db);
  await sql`insert into links.scan_day_close values (${sql.lit(today)}::date)`.execute(db);
  await sql`update links.scan_window set until = ${sql.lit(until)}::timestamptz, recounted_until = ${sql.lit(today)}::date,
    narrow_until = ${held ? sql`${sql.lit(until)}::timestamptz` : sql`'-infinity'::timestamptz`}`.execute(db);

  await sql`create or replace view links.visitor_days as
      select link_id, day, visitor from links.scan_visitor_days
      union all
      select link_id, day, hashtextextended(visitor_key, 0) from links.scan_day_visitors
      union all
      select link.id, date '1970-01-01' + ((raw.key >> 20) / 86400000)::int, raw.visitor
      from links.raw_scans as raw join links.links as link on link.number = raw.link`.execute(db);

  // Writers of the version before skip what this version stored: a scan sent again, or a visitor seen that day.
  await sql`create function links.skip_scan_stored_raw() returns trigger language plpgsql as ${sql.lit(`
    begin
      if exists (select 1 from links.raw_scans
          where link = (select number from links.links where id = new.link_id) and visitor = new.visitor and key = ${KEY_OF_ID}) then
        return null;
      end if;
      return new;
    end`)}`.execute(db);
  await sql`create trigger skip_stored_raw before insert on links.scan_events
    for each row execute function links.skip_scan_stored_raw()`.execute(db);
  await sql`create function links.skip_visitor_day_stored_raw() returns trigger language plpgsql as ${sql.lit(`
    begin
      if exists (select 1 from links.raw_scans
          where link = (select number from links.links where id = new.link_id) and visitor = new.visitor
            and key >= ${keyOfDay("new.day")} and key < ${keyOfDay("(new.day + 1)")}) then
        return null;
      end if;
      return new;
    end`)}`.execute(db);
  await sql`create trigger skip_stored_raw before insert on links.scan_visitor_days
    for each row execute function links.skip_visitor_day_stored_raw()`.execute(db);

  // The writers before 20270120T1000_narrow_scans, of the wide tables, skip what either later shape
  // stored too (a scan by its id when that is a UUIDv7 of its time, as the recorder makes them).
  await sql`create or replace function links.skip_scan_stored_narrow() returns trigger language plpgsql as ${sql.lit(`
    begin
      if exists (select 1 from links.scan_events where id = new.id) then return null; end if;
      if exists (select 1 from links.raw_scans
          where link = (select number from links.links where id = new.link_id)
            and visitor = hashtextextended(new.visitor_key, 0) and key = ${KEY_OF_ID}) then
        return null;
      end if;
      return new;
    end`)}`.execute(db);
  await sql`create or replace function links.skip_visitor_day_stored_narrow() returns trigger language plpgsql as ${sql.lit(`
    begin
      if exists (select 1 from links.scan_visitor_days
          where link_id = new.link_id and day = new.day and visitor = hashtextextended(new.visitor_key, 0)) then
        return null;
      end if;
      if exists (select 1 from links.raw_scans
          where link = (select number from links.links where id = new.link_id) and visitor = hashtextextended(new.visitor_key, 0)
            and key >= ${keyOfDay("new.day")} and key < ${keyOfDay("(new.day + 1)")}) then
        return null;
      end if;
      return new;
    end`)}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // The raw rows cannot be spread back (their agents, countries and referrers are one hash): going
  // back keeps the rows of the tables before only.
  await sql`create or replace function links.skip_scan_stored_narrow() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from links.scan_events where id = new.id) then return null; end if;
      return new;
    end $$`.execute(db);
  await sql`create or replace function links.skip_visitor_day_stored_narrow() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from links.scan_visitor_days
          where link_id = new.link_id and day = new.day and visitor = hashtextextended(new.visitor_key, 0)) then
        return null;
      end if;
      return new;
    end $$`.execute(db);
  await sql`drop trigger skip_stored_raw on links.scan_events`.execute(db);
  await sql`drop trigger skip_stored_raw on links.scan_visitor_days`.execute(db);
  await sql`drop function links.skip_scan_stored_raw(), links.skip_visitor_day_stored_raw()`.execute(db);
  await sql`create or replace view links.visitor_days as
      select link_id, day, visitor from links.scan_visitor_days
      union all
      select link_id, day, hashtextextended(visitor_key, 0) from links.scan_day_visitors`.execute(db);
  await sql`drop table links.scan_day_close`.execute(db);
  await sql`alter table links.scan_window drop column narrow_until, drop column recounted_until`.execute(db);
  await sql`drop table links.raw_scans, links.scan_contexts`.execute(db);
  await sql`alter table links.links drop column number`.execute(db);
}
