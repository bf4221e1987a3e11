import type { Client } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import type { TenancyService } from "@qrplatform/api/tenancy";
import type { LinkService } from "@qrplatform/api/links";
import type { RenderingService } from "@qrplatform/api/rendering";
import type { Logger, PageTokens } from "@qrplatform/platform";
import type { DesignCheck } from "./qr-codes/design-check.js";
import type { ScanTotals } from "./qr-codes/scan-totals.js";
import type { StoredRoutings } from "./qr-codes/stored-routings.js";
import type { CatalogTables } from "./tables.js";
import type { WebhookOptions } from "./webhooks/webhook-options.js";

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
  /** Scan totals of those links: the links service's, kept while it announces stored scans. */
  readonly scanTotals: ScanTotals;
  /** Codes' stored routing as protos, parsed once while it is unchanged. */
  readonly routings: StoredRoutings;
  /** Design validation. */
  readonly rendering: Client<typeof RenderingService>;
  /** Rendering's check of a design before its content is known, kept for designs without a logo. */
  readonly checkDesign: DesignCheck;
  /** How webhooks are delivered: which endpoint URLs are accepted, timeouts, retries. */
  readonly webhooks: WebhookOptions;
}
