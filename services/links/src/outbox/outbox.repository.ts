import { sql, type Kysely } from "kysely";
import type { LinksTables } from "../tables.js";
import type { OutboxEventRow } from "./outbox.table.js";

/** Records that a domain became verified, in the transaction that verified it. */
export async function recordDomainVerified(
  trx: Kysely<LinksTables>,
  domain: { account_id: string; id: string; hostname: string },
): Promise<void> {
  await trx
    .insertInto("outbox_events")
    .values({ account_id: domain.account_id, type: "domain.verified", domain_id: domain.id, hostname: domain.hostname })
    .execute();
}

/** The oldest events not yet acknowledged. */
export async function listOutboxEvents(db: Kysely<LinksTables>, limit: number): Promise<OutboxEventRow[]> {
  return db.selectFrom("outbox_events").selectAll().orderBy("position").limit(limit).execute();
}

/** Removes acknowledged events; returns how many were still there. */
export async function acknowledgeOutboxEvents(db: Kysely<LinksTables>, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db.deleteFrom("outbox_events").where("id", "in", ids).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Records `link.expired` for every live link whose expires_at has passed by `now` and was not announced
 * yet, remembering each (link, expires_at) in the same statement: each expiry is announced once,
 * however many instances run this at once. Answers how many were announced.
 */
export async function recordExpiredLinks(db: Kysely<LinksTables>, now: Date): Promise<number> {
  const { rows } = await sql<{ announced: number }>`
    WITH due AS (
      INSERT INTO links.expiry_announcements (link_id, expires_at)
      SELECT id, expires_at FROM links.links
      WHERE expires_at <= ${now} AND expires_at IS NOT NULL AND deleted_at IS NULL
      ON CONFLICT DO NOTHING
      RETURNING link_id
    ), announced AS (
      INSERT INTO links.outbox_events (account_id, type, link_ids, scan_counts)
      SELECT link.account_id, 'link.expired', ARRAY[link.id], ARRAY[0::bigint]
      FROM due JOIN links.links AS link ON link.id = due.link_id
      RETURNING 1
    )
    SELECT count(*)::int AS announced FROM announced
  `.execute(db);
  return rows[0]?.announced ?? 0;
}
