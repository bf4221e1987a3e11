import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// `link.scan_limit_reached`: written by the reservation that takes a link's last place under its scan
// limit, in the same statement, so it is written once per time the limit is reached (ADR 0018). It
// names the link in link_ids and the limit in scan_counts.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table links.outbox_events drop constraint outbox_events_type_check`.execute(db);
  await sql`
    alter table links.outbox_events add constraint outbox_events_type_check
      check (type in ('link.scanned', 'domain.verified', 'link.scan_limit_reached'))
  `.execute(db);
  await sql`
    alter table links.outbox_events add constraint outbox_events_scan_limit check (
      type <> 'link.scan_limit_reached'
      or (cardinality(link_ids) = 1 and cardinality(scan_counts) = 1)
    )
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from links.outbox_events where type = 'link.scan_limit_reached'`.execute(db);
  await sql`alter table links.outbox_events drop constraint outbox_events_scan_limit`.execute(db);
  await sql`alter table links.outbox_events drop constraint outbox_events_type_check`.execute(db);
  await sql`
    alter table links.outbox_events add constraint outbox_events_type_check
      check (type in ('link.scanned', 'domain.verified'))
  `.execute(db);
}
