import type { ColumnType, Insertable, Selectable, Updateable } from "kysely";
import type { Rule } from "@qrplatform/routing";

/**
 * links.links. A deleted link keeps its row, with `deleted_at` set, so neither of its slugs is ever
 * given out again.
 */
export interface LinksTable {
  id: string;
  account_id: string;
  /** The generated slug on the default short domain; unique over every link, deleted ones included. */
  slug: string;
  /** The custom domain of the vanity slug; null exactly when vanity_slug is null. */
  domain_id: string | null;
  /** Lower case; unique per domain over every link, deleted ones included. */
  vanity_slug: string | null;
  destination_url: string;
  /** Parameter name to value, set on the destination on redirect. Written as JSON text. */
  query_parameters: ColumnType<Record<string, string>, string, string>;
  /** A LinkStatus token: "active" or "paused". */
  status: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  /** The routing rules in order, in the API's JSON names; written as JSON text. */
  rules: ColumnType<Rule[], string | undefined, string>;
  /** Before this instant the link does not redirect to its destination; null means no start. */
  starts_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** From this instant on the link does not redirect to its destination; null means no end. */
  expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** How many scans may reach a destination; null means no limit. */
  max_scans: ColumnType<number | null, number | null | undefined, number | null>;
  /** Where scans go while the link is not live; null sends them a page instead. */
  expired_url: ColumnType<string | null, string | null | undefined, string | null>;
  /** The scrypt hash of the link's password (never the password); null when there is none. */
  password_hash: ColumnType<string | null, string | null | undefined, string | null>;
}

export type LinkRow = Selectable<LinksTable>;
export type NewLinkRow = Insertable<LinksTable>;
/** What an update may change: the destination, the status and the routing. */
export type LinkChanges = Pick<
  Updateable<LinksTable>,
  "destination_url" | "status" | "rules" | "starts_at" | "expires_at" | "max_scans" | "expired_url" | "password_hash"
>;

/** A link with the hostname of its custom domain, which its vanity URL needs. */
export type LinkView = LinkRow & { hostname: string | null };
