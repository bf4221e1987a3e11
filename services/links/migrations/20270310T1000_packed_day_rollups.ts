import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// A link-day's rollups and its sketch in one row of bytes. links.scan_day_rollups kept the day's
// breakdowns as two bigint arrays (about 24 + 8 bytes a value each) and links.scan_day_sketches a
// second row per link-day for its HyperLogLog sketch: 31 bytes a scan kept for ever at 25 scans a
// link-day. links.scan_link_days keeps one row per link and day: `counts`, the day's scans, distinct
// visitors and scans by value packed as varints, and `sketch`, the day's sketch once the day is over
// (null until then). The format (the application's day-encoding.ts reads and writes it):
//   counts: the byte 1, then varints (7 bits a byte, lowest first, high bit on all but the last):
//           scans, zigzag(unique scans), then per value with scans, ascending by code: the step from
//           the code before, and its scans.
//   sketch: varint zigzag(the day's distinct visitors when it was built), then the registers, whole
//           (4,096 bytes) or sparse (3 bytes a register set: index high byte, low byte, rank).
// links.scan_day_pack, scan_day_unpack and scan_day_varint spell the format in SQL, for the views here
// and for tools that fill rollups in SQL; links.scan_day_unique_scans reads a row's distinct visitors
// alone, for the service's readers that only add them up. They stay when the views go.
//
// Online, and through a rolling upgrade, as 20270301T1000_day_rollups: the rows move under a lock that
// lets readers of the version before read on and holds its folds until the end; links.scan_day_rollups
// then becomes a view that unpacks the new rows, so its readers find every count, and its folds fail
// on the view (it is not writable) and leave their deltas to this version's folds. links.scan_day_sketches
// stays a table the version before reads and writes; a trigger copies what it writes into the new rows,
// so a day whose raw visitors it drops keeps its sketch here. A later migration drops the views, the
// trigger and links.scan_day_sketches once no version before runs.
//
// The copy is one statement under the lock: about 10 seconds a million link-days on a laptop. A year
// of a service at 100 million scans a day is about 1.5 billion link-days, hours under the lock, with
// deltas piling up unfolded (readers still count them): such a deployment copies first in batches by
// link, with this migration then moving only what changed, or takes a maintenance window.

export async function up(db: Kysely<any>): Promise<void> {
  // Readers of the version before read on; its writers wait. scan_totals first, the first table its
  // folds write after their deltas, so a fold under way finishes before the lock is had and one not
  // started waits holding nothing here; scan_day_sketches before scan_day_rollups, so a partition
  // run under way, which reads the rollups while it writes sketches, finishes first too. (A fold
  // reads scan_day_rollups before it writes there: were it first, a fold could hold its read while
  // this waits to drop the table, and wait itself for this lock.)
  await sql`lock table links.scan_totals, links.scan_day_sketches, links.scan_day_rollups
    in exclusive mode`.execute(db);
  await sql`create function links.scan_day_varint(n bigint) returns bytea language plpgsql immutable strict as $$
    declare
      packed bytea := ''::bytea;
    begin
      if n < 0 then raise exception 'scan_day_varint: % is negative', n; end if;
      while n >= 128 loop
        packed := packed || substring(int4send(((n & 127) | 128)::int) from 4);
        n := n >> 7;
      end loop;
      return packed || substring(int4send(n::int) from 4);
    end $$`.execute(db);
  await sql`create function links.scan_day_zigzag(n bigint) returns bigint language sql immutable strict as $$
    select case when n < 0 then -2 * n - 1 else 2 * n end $$`.execute(db);
  await sql`create function links.scan_day_pack(scans bigint, unique_scans bigint, codes bigint[], counts bigint[])
    returns bytea language plpgsql immutable strict as $$
    declare
      packed bytea := decode('01', 'hex') || links.scan_day_varint(scans)
        || links.scan_day_varint(links.scan_day_zigzag(unique_scans));
      previous bigint := 0;
      entry record;
    begin
      for entry in select e.code, e.n from unnest(codes, counts) as e (code, n) where e.n <> 0 order by e.code loop
        packed := packed || links.scan_day_varint(entry.code - previous) || links.scan_day_varint(entry.n);
        previous := entry.code;
      end loop;
      return packed;
    end $$`.execute(db);
  await sql`create function links.scan_day_unpack(counts bytea, out scans bigint, out unique_scans bigint,
      out value_codes bigint[], out value_scans bigint[])
    language plpgsql immutable strict as $$
    declare
      at int := 1;
      n bigint;
      shift int;
      b int;
      numbers bigint[] := '{}';
      code bigint := 0;
      i int := 3;
    begin
      if length(counts) = 0 or get_byte(counts, 0) <> 1 then raise exception 'scan_day_unpack: unknown format'; end if;
      while at < length(counts) loop
        n := 0;
        shift := 0;
        loop
          b := get_byte(counts, at);
          at := at + 1;
          n := n | ((b & 127)::bigint << shift);
          shift := shift + 7;
          exit when b < 128;
        end loop;
        numbers := numbers || n;
      end loop;
      scans := numbers[1];
      unique_scans := case when numbers[2] % 2 = 1 then -(numbers[2] + 1) / 2 else numbers[2] / 2 end;
      value_codes := '{}';
      value_scans := '{}';
      while i < cardinality(numbers) loop
        code := code + numbers[i];
        value_codes := value_codes || code;
        value_scans := value_scans || numbers[i + 1];
        i := i + 2;
      end loop;
    end $$`.execute(db);
  // The day's distinct visitors alone (the second number), for a reader that needs only their sum.
  await sql`create function links.scan_day_unique_scans(counts bytea) returns bigint
    language plpgsql immutable strict parallel safe as $$
    declare
      at int := 1;
      n bigint;
      shift int;
      b int;
    begin
      if length(counts) = 0 or get_byte(counts, 0) <> 1 then raise exception 'scan_day_unique_scans: unknown format'; end if;
      for field in 1..2 loop
        n := 0;
        shift := 0;
        loop
          b := get_byte(counts, at);
          at := at + 1;
          n := n | ((b & 127)::bigint << shift);
          shift := shift + 7;
          exit when b < 128;
        end loop;
      end loop;
      return case when n % 2 = 1 then -(n + 1) / 2 else n / 2 end;
    end $$`.execute(db);
  await sql`create table links.scan_link_days (
      link_id uuid not null, day date not null, counts bytea not null, sketch bytea,
      constraint scan_link_days_pkey primary key (link_id, day))`.execute(db);
  await sql`insert into links.scan_link_days (link_id, day, counts, sketch)
    select link_id, day,
      links.scan_day_pack(coalesce(kept.scans, 0), coalesce(kept.unique_scans, 0),
        coalesce(kept.value_codes, '{}'), coalesce(kept.value_scans, '{}')),
      links.scan_day_varint(links.scan_day_zigzag(sketched.visitors)) || sketched.registers
    from links.scan_day_rollups as kept
    full join links.scan_day_sketches as sketched using (link_id, day)
    order by link_id, day`.execute(db);
  await sql`drop view links.scan_days, links.scan_day_values`.execute(db);
  await sql`drop table links.scan_day_rollups`.execute(db);
  await sql`create view links.scan_day_rollups as
    select kept.link_id, kept.day, unpacked.scans, unpacked.unique_scans, unpacked.value_codes, unpacked.value_scans
    from links.scan_link_days as kept cross join lateral links.scan_day_unpack(kept.counts) as unpacked`.execute(db);
  // The views 20270301T1000_day_rollups made for the version before it, as they were.
  await sql`create view links.scan_days as
    select link_id, day, scans, unique_scans from links.scan_day_rollups`.execute(db);
  await sql`create view links.scan_day_values as
    select kept.link_id, kept.day, code.dimension, substr(known.dimension_value, 2) as value, entry.scans
    from links.scan_day_rollups as kept
    cross join lateral unnest(kept.value_codes, kept.value_scans) as entry (code, scans)
    join links.scan_values as known on known.code = entry.code
    join (values ('c', 'country'), ('d', 'device'), ('o', 'os'), ('b', 'browser'), ('r', 'referrer'), ('u', 'rule'))
      as code (code, dimension) on code.code = left(known.dimension_value, 1)`.execute(db);
  await sql`create function links.copy_day_sketch() returns trigger language plpgsql as $$
    begin
      insert into links.scan_link_days (link_id, day, counts, sketch)
      values (new.link_id, new.day, links.scan_day_pack(0, 0, '{}', '{}'),
        links.scan_day_varint(links.scan_day_zigzag(new.visitors)) || new.registers)
      on conflict (link_id, day) do update set sketch = excluded.sketch;
      return null;
    end $$`.execute(db);
  await sql`create trigger copy_day_sketch after insert or update on links.scan_day_sketches
    for each row execute function links.copy_day_sketch()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`lock table links.scan_link_days in exclusive mode`.execute(db);
  await sql`drop trigger copy_day_sketch on links.scan_day_sketches`.execute(db);
  await sql`drop function links.copy_day_sketch()`.execute(db);
  // Sketches this version wrote go back to their own table: a day past the window has nothing else.
  await sql`create function links.split_day_sketch(sketch bytea, out visitors bigint, out registers bytea)
    language plpgsql immutable strict as $$
    declare
      at int := 0;
      n bigint := 0;
      b int;
    begin
      loop
        b := get_byte(sketch, at);
        n := n | ((b & 127)::bigint << (7 * at));
        at := at + 1;
        exit when b < 128;
      end loop;
      visitors := case when n % 2 = 1 then -(n + 1) / 2 else n / 2 end;
      registers := substring(sketch from at + 1);
    end $$`.execute(db);
  await sql`insert into links.scan_day_sketches (link_id, day, visitors, registers)
    select link_id, day, split.visitors, split.registers
    from links.scan_link_days cross join lateral links.split_day_sketch(sketch) as split
    where sketch is not null
    on conflict (link_id, day) do update set visitors = excluded.visitors, registers = excluded.registers`.execute(db);
  await sql`drop function links.split_day_sketch(bytea)`.execute(db);
  await sql`create table links.scan_day_rollups_unpacked (
      link_id uuid not null, day date not null, scans bigint not null, unique_scans bigint not null,
      value_codes bigint[] not null, value_scans bigint[] not null)`.execute(db);
  // A row only a sketch made counts nothing, and the version before has no such rows.
  await sql`insert into links.scan_day_rollups_unpacked select * from links.scan_day_rollups
    where scans <> 0 or unique_scans <> 0 or cardinality(value_codes) > 0`.execute(db);
  await sql`drop view links.scan_days, links.scan_day_values, links.scan_day_rollups`.execute(db);
  await sql`alter table links.scan_day_rollups_unpacked rename to scan_day_rollups`.execute(db);
  await sql`alter table links.scan_day_rollups add constraint scan_day_rollups_pkey primary key (link_id, day)`.execute(
    db,
  );
  await sql`create view links.scan_days as
    select link_id, day, scans, unique_scans from links.scan_day_rollups`.execute(db);
  await sql`create view links.scan_day_values as
    select kept.link_id, kept.day, code.dimension, substr(known.dimension_value, 2) as value, entry.scans
    from links.scan_day_rollups as kept
    cross join lateral unnest(kept.value_codes, kept.value_scans) as entry (code, scans)
    join links.scan_values as known on known.code = entry.code
    join (values ('c', 'country'), ('d', 'device'), ('o', 'os'), ('b', 'browser'), ('r', 'referrer'), ('u', 'rule'))
      as code (code, dimension) on code.code = left(known.dimension_value, 1)`.execute(db);
  await sql`drop table links.scan_link_days`.execute(db);
  await sql`drop function links.scan_day_unpack(bytea), links.scan_day_unique_scans(bytea),
    links.scan_day_pack(bigint, bigint, bigint[], bigint[]),
    links.scan_day_zigzag(bigint), links.scan_day_varint(bigint)`.execute(db);
}
