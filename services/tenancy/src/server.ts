import type { Kysely } from "kysely";
import { IdempotencyKeyService, TenancyAdminService, TenancyService } from "@qrplatform/api/tenancy";
import { migrateSchema, type SharedKysely } from "@qrplatform/db";
import { memoryAccessChanges, PageTokens, type AccessChangeBus, type GrpcModule } from "@qrplatform/platform";
import { migrations, SCHEMA } from "../migrations/index.js";
import { registerRoutes } from "./routes.js";
import type { TenancyTables } from "./tables.js";

/** What the tenancy service is built from. */
export interface TenancyOptions {
  /** The shared database handle; tenancy narrows it to its own schema. */
  db: SharedKysely;
  /** Signs list page tokens. */
  pageTokenSecret: string;
  /** The clock; tests replace it. */
  now?: () => Date;
  /**
   * Where key revocations and account changes are announced: the edges' bus (Redis across processes,
   * shared memory in one). Unset: announced to this process only, which no edge elsewhere hears.
   */
  accessChanges?: AccessChangeBus;
}

/** Migrates tenancy's schema and returns the service, ready to host or call in-process. */
export async function buildTenancy(options: TenancyOptions): Promise<GrpcModule> {
  await migrateSchema(options.db, SCHEMA, migrations);
  const deps = {
    db: options.db.withSchema(SCHEMA) as Kysely<TenancyTables>,
    pageTokens: new PageTokens(options.pageTokenSecret),
    now: options.now ?? (() => new Date()),
    accessChanges: options.accessChanges ?? memoryAccessChanges(),
  };
  return {
    services: [TenancyService, IdempotencyKeyService, TenancyAdminService],
    adminOnly: [TenancyAdminService],
    routes: (router) => registerRoutes(router, deps),
  };
}
