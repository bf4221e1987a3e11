import type { DomainsTable } from "./domains/domains.table.js";
import type { LinksTable } from "./links/links.table.js";

/** Every table of the links schema, for a `Kysely<LinksTables>` narrowed with `withSchema("links")`. */
export interface LinksTables {
  links: LinksTable;
  domains: DomainsTable;
}
