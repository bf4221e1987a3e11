// The catalog service as its own process. Configuration: see the README's table.
import { join } from "node:path";
import { z } from "zod";
import { databaseDependency, databaseEnv, openDatabase } from "@qrplatform/db";
import { Readiness, remoteTransport, runGrpcService, secretVar } from "@qrplatform/platform";
import { buildCatalog } from "./server.js";

await runGrpcService({
  service: "catalog",
  env: databaseEnv.extend({
    PAGE_TOKEN_SECRET: secretVar(),
    TENANCY_URL: z.string().url(),
    LINKS_URL: z.string().url(),
    RENDERING_URL: z.string().url(),
  }),
  async start(config, logger) {
    const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: join(config.DATA_DIR, "catalog") });
    const remote = (baseUrl: string) => remoteTransport({ baseUrl, token: config.SERVICE_TOKEN });
    const catalog = await buildCatalog({
      db: database.db,
      pageTokenSecret: config.PAGE_TOKEN_SECRET,
      logger,
      transports: {
        tenancy: remote(config.TENANCY_URL),
        links: remote(config.LINKS_URL),
        rendering: remote(config.RENDERING_URL),
      },
    });
    return { modules: [catalog], readiness: new Readiness([databaseDependency(database)], { logger }), close: () => database.close() };
  },
});
