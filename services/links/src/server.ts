import type { Kysely } from "kysely";
import { AnalyticsService, DomainService, LinkService, RedirectService } from "@qrplatform/api/links";
import { migrateSchema } from "@qrplatform/db";
import type { GrpcModule } from "@qrplatform/platform";
import { migrations, SCHEMA } from "../migrations/index.js";
import { registerRoutes } from "./routes.js";

/** What the links service is built from. */
export interface LinksOptions {
  /** The shared database handle; links narrows it to its own schema. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db: Kysely<any>;
}

/** Migrates the links schema and returns the service: short links, custom domains, redirects and analytics. */
export async function buildLinks(options: LinksOptions): Promise<GrpcModule> {
  await migrateSchema(options.db, SCHEMA, migrations);
  return {
    services: [LinkService, DomainService, RedirectService, AnalyticsService],
    routes: (router) => registerRoutes(router),
  };
}
