import type { ColumnType, Generated, Selectable } from "kysely";

/**
 * links.outbox_events: changes webhook endpoints hear about, each written in the transaction of the
 * change itself, kept until the catalog acknowledges it. See docs/adr/0017-signed-webhooks.md.
 */
export interface OutboxEventsTable {
  /** Commit-independent order of writing; events are handed out oldest first. */
  position: Generated<string>;
  id: Generated<string>;
  account_id: string;
  /** "link.scanned", "domain.verified", "link.scan_limit_reached" or "link.expired". */
  type: "link.scanned" | "domain.verified" | "link.scan_limit_reached" | "link.expired";
  /**
   * For link.scanned: the account's links whose scans a fold stored (at most 1,000), and how many of
   * each. For link.scan_limit_reached: the link, and its limit; for link.expired: the link, and 0.
   */
  link_ids: string[] | null;
  scan_counts: ColumnType<(number | string)[] | null, never, never>;
  domain_id: string | null;
  hostname: string | null;
  occurred_at: Generated<Date>;
}

export type OutboxEventRow = Selectable<OutboxEventsTable>;
