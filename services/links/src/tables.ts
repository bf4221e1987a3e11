import type { DomainsTable } from "./domains/domains.table.js";
import type { LinksTable } from "./links/links.table.js";
import type { OutboxEventsTable } from "./outbox/outbox.table.js";
import type { ScanReservationsTable } from "./redirects/scan-reservations.table.js";
import type {
  ScanDeltasTable,
  ScanContextsTable,
  RawScansTable,
  ScanLinkDaysTable,
  ScanTotalsTable,
  ScanValuesTable,
} from "./scans/analytics/scans.table.js";

/** Every table of the links schema, for a `Kysely<LinksTables>` narrowed with `withSchema("links")`. */
export interface LinksTables {
  links: LinksTable;
  domains: DomainsTable;
  raw_scans: RawScansTable;
  scan_contexts: ScanContextsTable;
  scan_totals: ScanTotalsTable;
  scan_link_days: ScanLinkDaysTable;
  scan_values: ScanValuesTable;
  scan_deltas: ScanDeltasTable;
  outbox_events: OutboxEventsTable;
  scan_reservations: ScanReservationsTable;
}
