import type { Kysely } from "kysely";
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
