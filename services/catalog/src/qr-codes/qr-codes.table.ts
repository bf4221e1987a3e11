import type { ColumnType, Generated, Insertable, Selectable, Updateable } from "kysely";

/** The stored utm values; only the ones given. */
export type UtmValues = Partial<Record<"source" | "medium" | "campaign", string>>;

/**
 * catalog.qr_codes. A row whose link_id is null is still being provisioned: it holds a place in the
 * account's capacity while its short link is created, and every read skips it.
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
  link_id: string | null;
  /** The custom domain of the vanity link, when there is one; counted against the custom-link limit. */
  vanity_domain_id: string | null;
  vanity_url: string | null;
  canonical_url: string | null;
  /** The normalized design, as the rendering service's proto JSON. */
  design: ColumnType<unknown, string, string>;
  utm: ColumnType<UtmValues | null, string | null, string | null>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
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
