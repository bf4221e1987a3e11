// The tenancy service as its own process. Configuration: see the README's table.
import { join } from "node:path";
import { databaseEnv, databaseReadiness, openDatabase } from "@qrplatform/db";
import { z } from "zod";
import { memoryAccessChanges, optionalVar, redisAccessChanges, runGrpcService, secretVar } from "@qrplatform/platform";
import { buildTenancy } from "./server.js";

await runGrpcService({
  service: "tenancy",
  env: databaseEnv.extend({ PAGE_TOKEN_SECRET: secretVar(), REDIS_URL: optionalVar(z.string().url()) }),
  async start(config, logger, metrics) {
    const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: join(config.DATA_DIR, "tenancy") });
    // Without Redis no edge in another process hears a change, and edges then ask tenancy on every request.
    const accessChanges = config.REDIS_URL ? await redisAccessChanges(config.REDIS_URL, logger) : memoryAccessChanges(logger);
    const tenancy = await buildTenancy({ db: database.db, pageTokenSecret: config.PAGE_TOKEN_SECRET, accessChanges });
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
