import { sql, type Kysely } from "kysely";
import type { LinksTables } from "../tables.js";

// The exact scan limit (ADR 0018). Not account-scoped: the redirect path names a link, never an account.

type Db = Kysely<LinksTables>;

/**
 * Takes one of a link's `maxScans` places for a counted scan, or answers false when all are taken. One
 * statement: Postgres runs an upsert's WHERE against the row it locked, latest version, so concurrent
 * reservations from any number of redirectors queue on the row and never take more places than the
 * limit. The reservation that takes the last place writes the `link.scan_limit_reached` outbox event
 * in the same statement, so the event is written exactly once each time the limit is reached.
 */
export async function reserveScan(db: Db, linkId: string, maxScans: number): Promise<boolean> {
  const { rows } = await sql<{ reserved: number }>`
    WITH taken AS (
      INSERT INTO links.scan_reservations (link_id, reserved) VALUES (${linkId}, 1)
      ON CONFLICT (link_id) DO UPDATE SET reserved = scan_reservations.reserved + 1
      WHERE scan_reservations.reserved < ${maxScans}
      RETURNING reserved
    ), reached AS (
      INSERT INTO links.outbox_events (account_id, type, link_ids, scan_counts)
      SELECT link.account_id, 'link.scan_limit_reached', ARRAY[link.id], ARRAY[taken.reserved::bigint]
      FROM taken JOIN links.links AS link ON link.id = ${linkId}
      WHERE taken.reserved = ${maxScans}
    )
    SELECT reserved FROM taken
  `.execute(db);
  return rows.length > 0;
}

/** How many places of each link's scan limit are taken: the counted scans let through; 0 for none. */
export async function reservedScans(db: Db, linkIds: readonly string[]): Promise<Map<string, number>> {
  const found = new Map<string, number>(linkIds.map((id) => [id, 0]));
  if (linkIds.length === 0) return found;
  const rows = await db
    .selectFrom("scan_reservations")
    .select(["link_id", "reserved"])
    .where("link_id", "in", [...linkIds])
    .execute();
  for (const row of rows) found.set(row.link_id, row.reserved);
  return found;
}
