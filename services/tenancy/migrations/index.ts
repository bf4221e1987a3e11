import type { Migrations } from "@qrplatform/db";
import * as accountsAndApiKeys from "./20261122T1600_accounts_and_api_keys.js";
import * as idempotencyKeys from "./20261215T1000_idempotency_keys.js";

/** The tenancy schema's migrations, oldest first. */
export const migrations: Migrations = {
  "20261122T1600_accounts_and_api_keys": accountsAndApiKeys,
  "20261215T1000_idempotency_keys": idempotencyKeys,
};

/** The Postgres schema that holds tenancy's tables. */
export const SCHEMA = "tenancy";
