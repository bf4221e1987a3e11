import { createClient, type Transport } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { QrCodeService, WorkspaceService } from "@qrplatform/api/catalog";
import { AnalyticsService, LinkService } from "@qrplatform/api/links";
import { RenderingService } from "@qrplatform/api/rendering";
import { TenancyService } from "@qrplatform/api/tenancy";
import { migrateSchema } from "@qrplatform/db";
import { PageTokens, type GrpcModule, type Logger, type Metrics } from "@qrplatform/platform";
import { migrations, SCHEMA } from "../migrations/index.js";
import { QrCodeReconciler, DEFAULT_RECONCILER_OPTIONS, type ReconcilerOptions } from "./qr-codes/qr-code-reconciler.js";
import { registerRoutes } from "./routes.js";
import type { CatalogTables } from "./tables.js";

/** What the catalog service is built from. */
export interface CatalogOptions {
  /** The shared database handle; the catalog narrows it to its own schema. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db: Kysely<any>;
  /** Signs list page tokens. */
  pageTokenSecret: string;
  /** How to reach the services the catalog calls: remote gRPC or in-process, the handlers do not care. */
  transports: { tenancy: Transport; links: Transport; rendering: Transport };
  logger: Logger;
  /** The clock; tests replace it. */
  now?: () => Date;
  /** How the reconciler of codes and links paces itself. */
  reconciler?: Partial<ReconcilerOptions>;
  /** Where the reconciler reports its passes and repairs. */
  metrics?: Metrics;
}

/** The catalog: its gRPC services, and the reconciler its process runs beside them. */
export interface CatalogModule extends GrpcModule {
  /** Repairs what crashes left between codes and links; not started until the process starts it. */
  readonly reconciler: QrCodeReconciler;
}

/** Migrates the catalog schema and returns the service: workspaces and QR codes. */
export async function buildCatalog(options: CatalogOptions): Promise<CatalogModule> {
  await migrateSchema(options.db, SCHEMA, migrations);
  const deps = {
    db: options.db.withSchema(SCHEMA) as Kysely<CatalogTables>,
    pageTokens: new PageTokens(options.pageTokenSecret),
    logger: options.logger,
    now: options.now ?? (() => new Date()),
    tenancy: createClient(TenancyService, options.transports.tenancy),
    links: createClient(LinkService, options.transports.links),
    analytics: createClient(AnalyticsService, options.transports.links),
    rendering: createClient(RenderingService, options.transports.rendering),
  };
  return {
    services: [WorkspaceService, QrCodeService],
    routes: (router) => registerRoutes(router, deps),
    reconciler: new QrCodeReconciler(deps, { ...DEFAULT_RECONCILER_OPTIONS, ...options.reconciler }, options.metrics),
  };
}
