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
  // Whether the cluster serves the domain, as the domain operator last reported it: all null until the
  // first report, then all set together (certificate_expires_at stays null while no certificate exists).
  serving: boolean | null;
  route_admitted: boolean | null;
  certificate_ready: boolean | null;
  certificate_expires_at: Date | null;
  /** The operator's reason in UpperCamelCase, such as "Serving" or "RouteConflict". */
  serving_reason: string | null;
  /** Its explanation for the domain's owner; empty when it gave none. */
  serving_message: string | null;
  /** When this serving state was first reported; a report of the same state does not move it. */
  serving_reported_at: Date | null;
}

/** The serving columns as one report sets them, all together. */
export interface ServingReport {
  serving: boolean;
  route_admitted: boolean;
  certificate_ready: boolean;
  certificate_expires_at: Date | null;
  serving_reason: string;
  serving_message: string;
}

export type DomainRow = Selectable<DomainsTable>;
export type NewDomainRow = Insertable<DomainsTable>;
