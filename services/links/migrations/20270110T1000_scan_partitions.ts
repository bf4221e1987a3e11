import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// links.scans and links.scan_day_visitors become tables partitioned by day (scanned_at, day), so the
// raw window is dropped a whole partition at a time once it is past the retention, instead of
// growing for ever. A partitioned table's keys must hold the partition key: a scan is now unique by
// (id, scanned_at), which still tells a batch sent again (its scans keep their time) from a new one.
//
// Online: the tables as they were are renamed and attached whole, as one partition for everything
// before tomorrow, so no row is copied and a writer waits only for this transaction. Writers whose
// INSERT queued on the old name find the new table when the rename commits. The service's partition
// manager creates the daily partitions after them and drops the old one once all of it is past the
// retention. links.scan_window says which scan times have a partition: scans outside it are not stored.

const DAY = "(date_trunc('day', now() at time zone 'UTC') at time zone 'UTC')";

export async function up(db: Kysely<any>): Promise<void> {
  await sql`lock table links.scans, links.scan_day_visitors in access exclusive mode`.execute(db);
  await sql`set local timezone = 'UTC'`.execute(db);
  // Every old row lies before the cut, however far ahead a clock put it.
  const { rows } = await sql<{ cut: string }>`
    select greatest(${sql.raw(DAY)} + interval '1 day',
      (select date_trunc('day', max(scanned_at) at time zone 'UTC') at time zone 'UTC' + interval '1 day' from links.scans),
      (select max(day)::timestamp at time zone 'UTC' + interval '1 day' from links.scan_day_visitors))::text as cut`.execute(
    db,
  );
  const cut = rows[0]!.cut;

  await sql`alter table links.scans rename to scans_before_partitions`.execute(db);
  // A partition's primary key is its table's: (id, scanned_at) replaces (id), built once from the old rows.
  await sql`alter table links.scans_before_partitions drop constraint scans_pkey`.execute(db);
  await sql`create table links.scans (
      id uuid not null, link_id uuid not null, account_id uuid not null, scanned_at timestamptz(3) not null,
      country text not null, device_type text not null, os text not null, browser text not null,
      referrer_host text not null, visitor_key text not null,
      constraint scans_pkey primary key (id, scanned_at)
    ) partition by range (scanned_at)`.execute(db);
  // A CHECK the attach can trust spares it another scan of the old rows.
  await sql`alter table links.scans_before_partitions add constraint scans_before_partitions_bound check (scanned_at < ${sql.lit(cut)}::timestamptz) not valid`.execute(
    db,
  );
  await sql`alter table links.scans_before_partitions validate constraint scans_before_partitions_bound`.execute(db);
  await sql`alter table links.scans attach partition links.scans_before_partitions for values from (minvalue) to (${sql.lit(cut)})`.execute(
    db,
  );

  await sql`alter table links.scan_day_visitors rename to scan_day_visitors_before_partitions`.execute(db);
  await sql`alter index links.scan_day_visitors_pkey rename to scan_day_visitors_before_partitions_pkey`.execute(db);
  await sql`create table links.scan_day_visitors (
      link_id uuid not null, day date not null, visitor_key text not null,
      constraint scan_day_visitors_pkey primary key (link_id, day, visitor_key)
    ) partition by range (day)`.execute(db);
  await sql`alter table links.scan_day_visitors_before_partitions add constraint scan_day_visitors_before_partitions_bound check (day < ${sql.lit(cut)}::timestamptz::date) not valid`.execute(
    db,
  );
  await sql`alter table links.scan_day_visitors_before_partitions validate constraint scan_day_visitors_before_partitions_bound`.execute(
    db,
  );
  await sql`alter table links.scan_day_visitors attach partition links.scan_day_visitors_before_partitions
    for values from (minvalue) to (${sql.lit(cut)}::timestamptz::date)`.execute(db);

  // The next two days, so scans keep arriving before the service's manager first runs.
  for (const offset of [0, 1]) {
    const { rows: bounds } = await sql<{ name: string; from: string; to: string }>`
      select to_char(${sql.lit(cut)}::timestamptz + ${offset} * interval '1 day', 'YYYYMMDD') as name,
        (${sql.lit(cut)}::timestamptz + ${offset} * interval '1 day')::text as from, (${sql.lit(cut)}::timestamptz + ${offset + 1} * interval '1 day')::text as to`.execute(
      db,
    );
    const { name, from, to } = bounds[0]!;
    await sql`create table ${sql.raw(`links.scans_${name}`)} partition of links.scans for values from (${sql.lit(from)}) to (${sql.lit(to)})`.execute(
      db,
    );
    await sql`create table ${sql.raw(`links.scan_day_visitors_${name}`)} partition of links.scan_day_visitors
      for values from (${sql.lit(from)}::timestamptz::date) to (${sql.lit(to)}::timestamptz::date)`.execute(db);
  }

  // The scan times that have a partition: [kept_from, until). One row, kept by the partition manager.
  await sql`create table links.scan_window (
      only_row boolean primary key default true check (only_row), kept_from timestamptz not null, until timestamptz not null)`.execute(
    db,
  );
  await sql`insert into links.scan_window (kept_from, until) values ('-infinity', ${sql.lit(cut)}::timestamptz + interval '2 days')`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table links.scan_window`.execute(db);
  for (const table of ["scans", "scan_day_visitors"]) {
    await sql`alter table ${sql.raw(`links.${table}`)} detach partition ${sql.raw(`links.${table}_before_partitions`)}`.execute(
      db,
    );
    await sql`insert into ${sql.raw(`links.${table}_before_partitions`)} select * from ${sql.raw(`links.${table}`)}`.execute(
      db,
    );
    await sql`drop table ${sql.raw(`links.${table}`)}`.execute(db);
    await sql`alter table ${sql.raw(`links.${table}_before_partitions`)} drop constraint ${sql.raw(`${table}_before_partitions_bound`)}`.execute(
      db,
    );
    await sql`alter table ${sql.raw(`links.${table}_before_partitions`)} rename to ${sql.raw(table)}`.execute(db);
    await sql`alter index ${sql.raw(`links.${table}_before_partitions_pkey`)} rename to ${sql.raw(`${table}_pkey`)}`.execute(
      db,
    );
  }
  await sql`alter table links.scans drop constraint scans_pkey`.execute(db);
  await sql`alter table links.scans add constraint scans_pkey primary key (id)`.execute(db);
}
