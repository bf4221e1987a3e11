import { sql, type Kysely } from "kysely";
import type { LinksTables } from "../tables.js";

// The exact scan limit (ADR 0018). Not account-scoped: the redirect path names a link, never an account.

type Db = Kysely<LinksTables>;

/**
 * Takes one of a link's `maxScans` places for a counted scan, or answers false when all are taken. One
 * statement: Postgres runs an upsert's WHERE against the row it locked, latest version, so concurrent
 * reservations from any number of redirectors queue on the row and never take more places than the limit.
 */
export async function reserveScan(db: Db, linkId: string, maxScans: number): Promise<boolean> {
  const taken = await db
    .insertInto("scan_reservations")
    .values({ link_id: linkId, reserved: 1 })
    .onConflict((conflict) =>
      conflict
        .column("link_id")
        .doUpdateSet({ reserved: sql`scan_reservations.reserved + 1` })
        .where("scan_reservations.reserved", "<", maxScans),
    )
    .returning("reserved")
    .executeTakeFirst();
  return taken !== undefined;
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
