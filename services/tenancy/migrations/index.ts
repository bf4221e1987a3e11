import type { Migrations } from "@qrplatform/db";
import * as accountsAndApiKeys from "./20261122T1600_accounts_and_api_keys.js";

/** The tenancy schema's migrations, oldest first. */
export const migrations: Migrations = {
  "20261122T1600_accounts_and_api_keys": accountsAndApiKeys,
};

/** The Postgres schema that holds tenancy's tables. */
export const SCHEMA = "tenancy";
