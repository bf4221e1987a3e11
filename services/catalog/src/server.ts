import { createClient, type Client, type Transport } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { QrCodeService, WebhookEndpointService, WorkspaceService } from "@qrplatform/api/catalog";
import { AnalyticsService, LinkService, OutboxService } from "@qrplatform/api/links";
import { RenderingService } from "@qrplatform/api/rendering";
import { TenancyService } from "@qrplatform/api/tenancy";
import { migrateSchema, type SharedKysely } from "@qrplatform/db";
import { PageTokens, type GrpcModule, type Logger, type Metrics, type ScanChangeBus } from "@qrplatform/platform";
import { migrations, SCHEMA } from "../migrations/index.js";
import { QrCodeReconciler, DEFAULT_RECONCILER_OPTIONS, type ReconcilerOptions } from "./qr-codes/qr-code-reconciler.js";
import { rememberedDesignChecks } from "./qr-codes/design-check.js";
import { askedScanTotals, cachedScanTotals } from "./qr-codes/scan-totals.js";
import { storedRoutings } from "./qr-codes/stored-routings.js";
import { registerRoutes } from "./routes.js";
import type { CatalogTables } from "./tables.js";
import { OutboxRelay } from "./webhooks/outbox-relay.js";
import { WebhookDispatcher } from "./webhooks/webhook-dispatcher.js";
import { DEFAULT_WEBHOOK_OPTIONS, type WebhookOptions } from "./webhooks/webhook-options.js";

export { webhookEnv, webhookOptionsFromEnv } from "./webhooks/webhook-env.js";
export { DEFAULT_RETRY_SCHEDULE_MS, DEFAULT_WEBHOOK_OPTIONS, type WebhookOptions } from "./webhooks/webhook-options.js";

/** What the catalog service is built from. */
export interface CatalogOptions {
  /** The shared database handle; the catalog narrows it to its own schema. */
  db: SharedKysely;
  /** Signs list page tokens. */
  pageTokenSecret: string;
  /** How to reach the services the catalog calls: remote gRPC or in-process, the handlers do not care. */
  transports: { tenancy: Transport; links: Transport; rendering: Transport };
  logger: Logger;
  /** The clock; tests replace it. */
  now?: () => Date;
  /** How the reconciler of codes and links paces itself. */
  reconciler?: Partial<ReconcilerOptions>;
  /** How webhooks are delivered; production's defaults where unset. */
  webhooks?: Partial<WebhookOptions>;
  /** Where the reconciler and the webhook workers report. */
  metrics?: Metrics;
  /**
   * Where the links service announces stored scans (the bus it was given): with it, scan totals are
   * kept until their links' scans change; without it, every read asks the links service.
   */
  scanChanges?: ScanChangeBus;
}

/** The webhook workers a catalog process runs: the relay of the links service's events and the deliveries. */
export interface WebhookWorkers {
  /** Starts relaying and delivering; every catalog process may, at once. */
  start(): void;
  /** Stops, waiting for the passes and attempts under way. */
  stop(): Promise<void>;
}

/** The catalog: its gRPC services, and the reconciler its process runs beside them. */
export interface CatalogModule extends GrpcModule {
  /** Repairs what crashes left between codes and links; not started until the process starts it. */
  readonly reconciler: QrCodeReconciler;
  /** Relays events and delivers webhooks; not started until the process starts them. */
  readonly webhooks: WebhookWorkers;
}

function scanTotalsOf(analytics: Client<typeof AnalyticsService>, bus: ScanChangeBus | undefined) {
  const ask = askedScanTotals(analytics);
  return bus ? cachedScanTotals(ask, bus) : ask;
}

/** Migrates the catalog schema and returns the service: workspaces, QR codes and webhook endpoints. */
export async function buildCatalog(options: CatalogOptions): Promise<CatalogModule> {
  await migrateSchema(options.db, SCHEMA, migrations);
  const webhooks = { ...DEFAULT_WEBHOOK_OPTIONS, ...options.webhooks };
  const rendering = createClient(RenderingService, options.transports.rendering);
  const deps = {
    db: options.db.withSchema(SCHEMA) as Kysely<CatalogTables>,
    pageTokens: new PageTokens(options.pageTokenSecret),
    logger: options.logger,
    now: options.now ?? (() => new Date()),
    tenancy: createClient(TenancyService, options.transports.tenancy),
    links: createClient(LinkService, options.transports.links),
    scanTotals: scanTotalsOf(createClient(AnalyticsService, options.transports.links), options.scanChanges),
    rendering,
    checkDesign: rememberedDesignChecks(rendering),
    routings: storedRoutings(),
    webhooks,
  };
  const relay = new OutboxRelay(
    deps.db,
    createClient(OutboxService, options.transports.links),
    webhooks,
    deps.logger,
    deps.now,
  );
  const dispatcher = new WebhookDispatcher(deps.db, webhooks, deps.logger, deps.now, options.metrics);
  return {
    services: [WorkspaceService, QrCodeService, WebhookEndpointService],
    routes: (router) => registerRoutes(router, deps),
    reconciler: new QrCodeReconciler(deps, { ...DEFAULT_RECONCILER_OPTIONS, ...options.reconciler }, options.metrics),
    webhooks: {
      start() {
        relay.start();
        dispatcher.start();
      },
      async stop() {
        await Promise.all([relay.stop(), dispatcher.stop()]);
      },
    },
  };
}
