// The catalog service as its own process. Configuration: see docs/configuration.md.
import { join } from "node:path";
import { z } from "zod";
import { databaseEnv, databaseReadiness, openDatabase, whenDatabaseAnswers } from "@qrplatform/db";
import { optionalVar, redisScanChanges, remoteTransport, runGrpcService, secretVar } from "@qrplatform/platform";
import { buildCatalog, webhookEnv, webhookOptionsFromEnv } from "./server.js";

await runGrpcService({
  service: "catalog",
  env: databaseEnv.merge(webhookEnv).extend({
    PAGE_TOKEN_SECRET: secretVar(),
    TENANCY_URL: z.string().url(),
    LINKS_URL: z.string().url(),
    RENDERING_URL: z.string().url(),
    REDIS_URL: optionalVar(z.string().url()),
    RECONCILE_GRACE_SECONDS: z.coerce.number().int().min(1).default(60),
    RECONCILE_INTERVAL_SECONDS: z.coerce.number().int().min(1).default(15),
  }),
  async start(config, logger, metrics, stopping) {
    const database = await openDatabase({
      databaseUrl: config.DATABASE_URL,
      dataDir: join(config.DATA_DIR, "catalog"),
    });
    // The links service announces stored scans here; without Redis this process keeps no scan total
    // and asks the links service on every read.
    const scanChanges = config.REDIS_URL ? await redisScanChanges(config.REDIS_URL, logger) : undefined;
    const remote = (baseUrl: string) => remoteTransport({ baseUrl, token: config.SERVICE_TOKEN });
    // Started during an outage, the process waits for the database (alive, not ready) instead of exiting.
    const build = () =>
      buildCatalog({
        db: database.db,
        pageTokenSecret: config.PAGE_TOKEN_SECRET,
        logger,
        transports: {
          tenancy: remote(config.TENANCY_URL),
          links: remote(config.LINKS_URL),
          rendering: remote(config.RENDERING_URL),
        },
        metrics,
        reconciler: {
          graceMs: config.RECONCILE_GRACE_SECONDS * 1000,
          intervalMs: config.RECONCILE_INTERVAL_SECONDS * 1000,
        },
        webhooks: webhookOptionsFromEnv(config),
        scanChanges,
      });
    const catalog = await whenDatabaseAnswers(build, { logger, what: "migrating", signal: stopping });
    catalog.reconciler.start();
    catalog.webhooks.start();
    return {
      modules: [catalog],
      readiness: databaseReadiness(database, { logger, metrics }),
      close: async () => {
        await catalog.reconciler.stop();
        await catalog.webhooks.stop();
        await scanChanges?.close();
        await database.close();
      },
    };
  },
});
