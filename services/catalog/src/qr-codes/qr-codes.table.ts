import type { ColumnType, Generated, Insertable, Selectable, Updateable } from "kysely";

/** The stored utm values; only the ones given. */
export type UtmValues = Partial<Record<"source" | "medium" | "campaign", string>>;

/**
 * catalog.qr_codes. A code's short link lives in the links service; every change that touches both
 * records itself here first (pending_operation), so that a crash halfway leaves a row saying what to
 * finish or undo. A code whose create is pending holds a place in the account's capacity while its
 * link is made, and every read skips it. See docs/adr/0010-catalog-and-links-consistency.md.
 */
export interface QrCodesTable {
  id: string;
  account_id: string;
  workspace_id: string | null;
  name: string;
  destination_url: string;
  /** A QrCodeStatus token: "active" or "paused". */
  status: string;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  /** Chosen before the link is made, so that a create that failed halfway can find its link; null only on rows older than that rule. */
  link_id: string | null;
  /** The custom domain of the vanity link, when there is one; counted against the custom-link limit. */
  vanity_domain_id: string | null;
  vanity_url: string | null;
  canonical_url: string | null;
  /** The normalized design, as the rendering service's proto JSON. */
  design: ColumnType<unknown, string, string>;
  utm: ColumnType<UtmValues | null, string | null, string | null>;
  /**
   * The link's routing as the links service last answered it, as the proto JSON of LinkRouting (rules with
   * their ids, lifetime, scan limit, fallback, password_protected; never a password); null when none. Reads
   * select it as text, writes' `returning` gives it parsed: StoredRoutings takes either.
   */
  routing: ColumnType<unknown, string | null | undefined, string | null>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  /** What is under way on the code and its link, if anything: "create", "update" or "delete". */
  pending_operation: ColumnType<
    "create" | "update" | "delete" | null,
    "create" | "update" | "delete" | null | undefined,
    "create" | "update" | "delete" | null
  >;
  /** When that operation started; also its token, so only the operation that set it clears it. */
  pending_since: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The client's Idempotency-Key of the create that made the code (per account, unique), if it sent one. */
  idempotency_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** SHA-256 of the request that key was first used for. */
  idempotency_fingerprint: ColumnType<Buffer | null, Uint8Array | null | undefined, Uint8Array | null>;
}

/** catalog.account_capacity_locks: one row per account, locked by creates so capacity checks serialize. */
export interface AccountCapacityLocksTable {
  account_id: string;
}

export type QrCodeRow = Selectable<QrCodesTable>;
export type NewQrCodeRow = Insertable<QrCodesTable>;
export type QrCodeChanges = Updateable<QrCodesTable>;

/** A code whose link exists: what every read returns. */
export type ProvisionedQrCodeRow = QrCodeRow & { link_id: string; vanity_url: string; canonical_url: string };
