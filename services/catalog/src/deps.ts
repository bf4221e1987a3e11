import type { Client } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import type { TenancyService } from "@qrplatform/api/tenancy";
import type { AnalyticsService, LinkService } from "@qrplatform/api/links";
import type { RenderingService } from "@qrplatform/api/rendering";
import type { Logger, PageTokens } from "@qrplatform/platform";
import type { CatalogTables } from "./tables.js";

/** What the catalog's handlers need; built once by server.ts. */
export interface CatalogDeps {
  readonly db: Kysely<CatalogTables>;
  readonly pageTokens: PageTokens;
  readonly logger: Logger;
  readonly now: () => Date;
  /** Plans, capacities and add-ons of accounts. */
  readonly tenancy: Client<typeof TenancyService>;
  /** The short link behind each QR code. */
  readonly links: Client<typeof LinkService>;
  /** Scan totals of those links. */
  readonly analytics: Client<typeof AnalyticsService>;
  /** Design validation. */
  readonly rendering: Client<typeof RenderingService>;
}
