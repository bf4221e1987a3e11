// The migration that groups a fold's link.scanned outbox events by account: events written in the old
// shape (one link each) and not relayed yet are rewritten in the new one, so none is lost across it.
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateSchema, type Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { migrations, SCHEMA } from "../migrations/index.js";

const MIGRATION = "20270105T1000_outbox_scans_by_account";

let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());

describe("the outbox migration to scans grouped by account", () => {
  it("rewrites the events not relayed yet, each naming its one link, and leaves the others as they were", async () => {
    const older = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < MIGRATION));
    await migrateSchema(database.db, SCHEMA, older);
    const { db } = database;
    const [accountId, linkA, linkB, domainId] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await sql`insert into links.outbox_events (account_id, type, link_id, scan_count) values
      (${accountId}, 'link.scanned', ${linkA}, 3), (${accountId}, 'link.scanned', ${linkB}, 5)`.execute(db);
    await sql`insert into links.outbox_events (account_id, type, domain_id, hostname) values (${accountId}, 'domain.verified', ${domainId}, 'go.example')`.execute(
      db,
    );

    const throughIt = Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= MIGRATION));
    expect(await migrateSchema(db, SCHEMA, throughIt)).toEqual([MIGRATION]);
    const { rows } = await sql<{
      type: string;
      link_ids: string[] | null;
      scan_counts: (string | number)[] | null;
      domain_id: string | null;
    }>`
      select type, link_ids, scan_counts, domain_id from links.outbox_events order by position`.execute(db);
    expect(rows.map((row) => ({ ...row, scan_counts: row.scan_counts?.map(Number) ?? null }))).toEqual([
      { type: "link.scanned", link_ids: [linkA], scan_counts: [3], domain_id: null },
      { type: "link.scanned", link_ids: [linkB], scan_counts: [5], domain_id: null },
      { type: "domain.verified", link_ids: null, scan_counts: null, domain_id: domainId },
    ]);
    // A link.scanned event must name its links from now on.
    await expect(
      sql`insert into links.outbox_events (account_id, type) values (${accountId}, 'link.scanned')`.execute(db),
    ).rejects.toMatchObject({
      constraint: "outbox_events_link_scans",
    });
  });
});
