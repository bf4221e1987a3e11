// The tenancy service as its own process. Configuration: see docs/configuration.md.
import { join } from "node:path";
import { databaseEnv, databaseReadiness, openDatabase, whenDatabaseAnswers } from "@qrplatform/db";
import { z } from "zod";
import { memoryAccessChanges, optionalVar, redisAccessChanges, runGrpcService, secretVar } from "@qrplatform/platform";
import { buildTenancy } from "./server.js";

await runGrpcService({
  service: "tenancy",
  env: databaseEnv.extend({ PAGE_TOKEN_SECRET: secretVar(), REDIS_URL: optionalVar(z.string().url()) }),
  async start(config, logger, metrics, stopping) {
    const database = await openDatabase({
      databaseUrl: config.DATABASE_URL,
      dataDir: join(config.DATA_DIR, "tenancy"),
    });
    // Without Redis no edge in another process hears a change, and edges then ask tenancy on every request.
    const accessChanges = config.REDIS_URL
      ? await redisAccessChanges(config.REDIS_URL, logger)
      : memoryAccessChanges(logger);
    // Started during an outage, the process waits for the database (alive, not ready) instead of exiting.
    const tenancy = await whenDatabaseAnswers(
      () => buildTenancy({ db: database.db, pageTokenSecret: config.PAGE_TOKEN_SECRET, accessChanges }),
      {
        logger,
        what: "migrating",
        signal: stopping,
      },
    );
    return {
      modules: [tenancy],
      readiness: databaseReadiness(database, { logger, metrics }),
      close: async () => {
        await database.close();
        await accessChanges.close();
      },
    };
  },
});
