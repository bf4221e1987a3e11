import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// `link.expired`: once a link's expires_at has passed, a periodic pass writes the outbox event and
// remembers (link, expires_at) here in the same statement, so each expiry is announced once, by
// whichever links instance gets there first; a new expires_at that passes in turn is announced again.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("links.expiry_announcements")
    .addColumn("link_id", "uuid", (c) => c.notNull().references("links.links.id").onDelete("cascade"))
    .addColumn("expires_at", sql`timestamptz(3)`, (c) => c.notNull())
    .addPrimaryKeyConstraint("expiry_announcements_pkey", ["link_id", "expires_at"])
    .execute();
  await sql`
    create index links_expires_at on links.links (expires_at)
    where expires_at is not null and deleted_at is null
  `.execute(db);
  await sql`alter table links.outbox_events drop constraint outbox_events_type_check`.execute(db);
  await sql`
    alter table links.outbox_events add constraint outbox_events_type_check
      check (type in ('link.scanned', 'domain.verified', 'link.scan_limit_reached', 'link.expired'))
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from links.outbox_events where type = 'link.expired'`.execute(db);
  await sql`alter table links.outbox_events drop constraint outbox_events_type_check`.execute(db);
  await sql`
    alter table links.outbox_events add constraint outbox_events_type_check
      check (type in ('link.scanned', 'domain.verified', 'link.scan_limit_reached'))
  `.execute(db);
  await sql`drop index links.links_expires_at`.execute(db);
  await db.schema.dropTable("links.expiry_announcements").execute();
}
