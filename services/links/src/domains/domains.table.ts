import type { Insertable, Selectable } from "kysely";

/**
 * links.domains. A removed domain keeps its row, with `deleted_at` set: deleted links still reference
 * it and keep their vanity slugs reserved on it, while its hostname is free for anyone to register.
 */
export interface DomainsTable {
  id: string;
  account_id: string;
  /** Lower-case ASCII; unique among domains that are not removed. */
  hostname: string;
  /** A DomainState token: "pending", "verified" or "failed". */
  state: string;
  /** 32 random bytes, base64url: the secret part of the TXT challenge. */
  challenge_token: string;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
  verified_at: Date | null;
  last_checked_at: Date | null;
  deleted_at: Date | null;
}

export type DomainRow = Selectable<DomainsTable>;
export type NewDomainRow = Insertable<DomainsTable>;
