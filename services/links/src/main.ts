// The links service as its own process. Configuration: see the README's table.
import { join } from "node:path";
import { databaseEnv, openDatabase } from "@qrplatform/db";
import { runGrpcService } from "@qrplatform/platform";
import { buildLinks } from "./server.js";

await runGrpcService({
  service: "links",
  env: databaseEnv,
  async start(config) {
    const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: join(config.DATA_DIR, "links") });
    const links = await buildLinks({ db: database.db });
    return { modules: [links], close: () => database.close() };
  },
});
