// The tenancy service as its own process. Configuration: see the README's table.
import { join } from "node:path";
import { databaseEnv, databaseReadiness, openDatabase } from "@qrplatform/db";
import { runGrpcService, secretVar } from "@qrplatform/platform";
import { buildTenancy } from "./server.js";

await runGrpcService({
  service: "tenancy",
  env: databaseEnv.extend({ PAGE_TOKEN_SECRET: secretVar() }),
  async start(config, logger, metrics) {
    const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: join(config.DATA_DIR, "tenancy") });
    const tenancy = await buildTenancy({ db: database.db, pageTokenSecret: config.PAGE_TOKEN_SECRET });
    return { modules: [tenancy], readiness: databaseReadiness(database, { logger, metrics }), close: () => database.close() };
  },
});
