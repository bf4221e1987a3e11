// The links service as its own process: gRPC on GRPC_PORT, and the public redirector on REDIRECT_PORT.
// Configuration: see the README's table.
import { join } from "node:path";
import { z } from "zod";
import { databaseEnv, openDatabase } from "@qrplatform/db";
import { inProcessTransport, listenHttp, optionalVar, portVar, runGrpcService, secretVar } from "@qrplatform/platform";
import { buildLinks, buildRedirector, resolveVia } from "./server.js";

await runGrpcService({
  service: "links",
  env: databaseEnv.extend({
    PAGE_TOKEN_SECRET: secretVar(),
    SHORT_LINK_BASE_URL: z.string().url(),
    CUSTOM_DOMAIN_SCHEME: z.enum(["https", "http"]).default("https"),
    DNS_RESOLVER: optionalVar(z.string()),
    REDIRECT_HOST: z.string().default("0.0.0.0"),
    REDIRECT_PORT: portVar(8081),
  }),
  async start(config, logger) {
    const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: join(config.DATA_DIR, "links") });
    const links = await buildLinks({
      db: database.db,
      shortLinkBaseUrl: config.SHORT_LINK_BASE_URL,
      customDomainScheme: config.CUSTOM_DOMAIN_SCHEME,
      dnsResolver: config.DNS_RESOLVER,
      pageTokenSecret: config.PAGE_TOKEN_SECRET,
    });
    // The redirector calls this process's own RedirectService through the same interceptors as gRPC.
    const credentials = { serviceToken: config.SERVICE_TOKEN, adminToken: config.ADMIN_TOKEN };
    const transport = inProcessTransport({ modules: [links], credentials, logger, token: config.SERVICE_TOKEN });
    const redirector = await listenHttp({
      handler: buildRedirector({ resolve: resolveVia(transport), logger }),
      host: config.REDIRECT_HOST,
      port: config.REDIRECT_PORT,
      logger,
      name: "redirector",
    });
    return {
      modules: [links],
      // Runs after the gRPC server has drained: finish redirects in flight, then close the database.
      async close() {
        await redirector.close();
        await database.close();
      },
    };
  },
});
