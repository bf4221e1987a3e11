import type { ColumnType, Insertable, Selectable } from "kysely";

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
}

export type LinkRow = Selectable<LinksTable>;
export type NewLinkRow = Insertable<LinksTable>;

/** A link with the hostname of its custom domain, which its vanity URL needs. */
export type LinkView = LinkRow & { hostname: string | null };
