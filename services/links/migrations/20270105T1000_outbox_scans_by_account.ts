import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// A `link.scanned` outbox event names all the links of one account that a fold stored scans of (up to
// 1,000), instead of one link: a fold over a busy account's thousand links writes one event, which the
// catalog relays in one step, not a thousand (ADR 0014). Events not yet relayed are
// rewritten in the new shape.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table links.outbox_events add column link_ids uuid[], add column scan_counts bigint[]`.execute(db);
  await sql`
    update links.outbox_events set link_ids = array[link_id], scan_counts = array[scan_count]
    where type = 'link.scanned'
  `.execute(db);
  await sql`alter table links.outbox_events drop column link_id, drop column scan_count`.execute(db);
  await sql`
    alter table links.outbox_events add constraint outbox_events_link_scans check (
      type <> 'link.scanned'
      or (link_ids is not null and scan_counts is not null and cardinality(link_ids) between 1 and 1000 and cardinality(scan_counts) = cardinality(link_ids))
    )
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table links.outbox_events drop constraint outbox_events_link_scans`.execute(db);
  await sql`alter table links.outbox_events add column link_id uuid, add column scan_count bigint`.execute(db);
  // One event per link again, as the older code writes and reads them.
  await sql`
    insert into links.outbox_events (account_id, type, link_id, scan_count, occurred_at)
    select account_id, type, scans.link_id, scans.scan_count, occurred_at
    from links.outbox_events, unnest(link_ids, scan_counts) as scans (link_id, scan_count)
    where type = 'link.scanned'
    order by position
  `.execute(db);
  await sql`delete from links.outbox_events where type = 'link.scanned' and link_id is null`.execute(db);
  await sql`alter table links.outbox_events drop column link_ids, drop column scan_counts`.execute(db);
}
