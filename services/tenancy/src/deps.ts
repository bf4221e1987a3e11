import type { Kysely } from "kysely";
import type { AccessChangeBus, PageTokens } from "@qrplatform/platform";
import type { TenancyTables } from "./tables.js";

/** What tenancy's handlers need; built once by server.ts. */
export interface TenancyDeps {
  readonly db: Kysely<TenancyTables>;
  readonly pageTokens: PageTokens;
  /** The current time; replaceable so tests can move past an expiry. */
  readonly now: () => Date;
  /** Where revoked keys and changed accounts are announced, so edges drop what they cached of them. */
  readonly accessChanges: AccessChangeBus;
}
