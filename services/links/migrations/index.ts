import type { Migrations } from "@qrplatform/db";
import * as linksAndDomains from "./20261123T1000_links_and_domains.js";
import * as scans from "./20261123T1400_scans.js";
import * as domainServing from "./20261210T1000_domain_serving.js";
import * as scanDeltasAndSketches from "./20261220T1000_scan_deltas_and_sketches.js";
import * as scanDeltasByCombination from "./20261228T1000_scan_deltas_by_combination.js";
import * as outbox from "./20261230T1000_outbox.js";
import * as outboxScansByAccount from "./20270105T1000_outbox_scans_by_account.js";
import * as scanPartitions from "./20270110T1000_scan_partitions.js";
import * as narrowScans from "./20270120T1000_narrow_scans.js";
import * as linkRouting from "./20270215T1000_link_routing.js";
import * as scanReservations from "./20270216T1000_scan_reservations.js";
import * as outboxScanLimitReached from "./20270216T1100_outbox_scan_limit_reached.js";
import * as expiryAnnouncements from "./20270216T1200_expiry_announcements.js";
import * as scanDeltasByRule from "./20270217T1000_scan_deltas_by_rule.js";
import * as dayRollups from "./20270301T1000_day_rollups.js";
import * as packedDayRollups from "./20270310T1000_packed_day_rollups.js";
import * as rawScans from "./20270310T1100_raw_scans.js";

/** The links schema's migrations, oldest first. */
export const migrations: Migrations = {
  "20261123T1000_links_and_domains": linksAndDomains,
  "20261123T1400_scans": scans,
  "20261210T1000_domain_serving": domainServing,
  "20261220T1000_scan_deltas_and_sketches": scanDeltasAndSketches,
  "20261228T1000_scan_deltas_by_combination": scanDeltasByCombination,
  "20261230T1000_outbox": outbox,
  "20270105T1000_outbox_scans_by_account": outboxScansByAccount,
  "20270110T1000_scan_partitions": scanPartitions,
  "20270120T1000_narrow_scans": narrowScans,
  "20270215T1000_link_routing": linkRouting,
  "20270216T1000_scan_reservations": scanReservations,
  "20270216T1100_outbox_scan_limit_reached": outboxScanLimitReached,
  "20270216T1200_expiry_announcements": expiryAnnouncements,
  "20270217T1000_scan_deltas_by_rule": scanDeltasByRule,
  "20270301T1000_day_rollups": dayRollups,
  "20270310T1000_packed_day_rollups": packedDayRollups,
  "20270310T1100_raw_scans": rawScans,
};

/** The Postgres schema that holds the links service's tables. */
export const SCHEMA = "links";
