import type { Migrations } from "@qrplatform/db";
import * as linksAndDomains from "./20261123T1000_links_and_domains.js";
import * as scans from "./20261123T1400_scans.js";

/** The links schema's migrations, oldest first. */
export const migrations: Migrations = {
  "20261123T1000_links_and_domains": linksAndDomains,
  "20261123T1400_scans": scans,
};

/** The Postgres schema that holds the links service's tables. */
export const SCHEMA = "links";
