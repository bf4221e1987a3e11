// Test support: the four qrplatform services, each on its own real h2c server on a free port, wired
// the way the standalone processes wire them (catalog reaches the others over the network).
import { fileURLToPath } from "node:url";
import type { Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { MIGRATED_PLATFORM } from "@qrplatform/testing";
import { createLogger, remoteTransport, serveGrpc, type GrpcModule, type GrpcServer } from "@qrplatform/platform";
import { buildCatalog } from "@qrplatform/catalog";
import { buildLinks } from "@qrplatform/links";
import { buildRendering } from "@qrplatform/rendering";
import { buildTenancy } from "@qrplatform/tenancy";

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL("../../../../../", import.meta.url));

/** Internal credentials the test servers accept; both are at least 32 characters, as configuration demands. */
export const CREDENTIALS = {
  serviceToken: "service-token-for-interop-tests-0123456789",
  adminToken: "admin-token-for-interop-tests-9876543210ab",
} as const;

export const PAGE_TOKEN_SECRET = "page-token-secret-for-interop-tests-xyz";

/** A logger that writes nothing. */
export const silentLogger = createLogger({ service: "test", level: "silent" });

/** Starts one module on a fresh h2c server on a free loopback port. */
export function serveOne(module: GrpcModule): Promise<GrpcServer> {
  return serveGrpc({ modules: [module], credentials: CREDENTIALS, logger: silentLogger, host: "127.0.0.1", port: 0 });
}

/**
 * The services each server hosts, by full name: what reflection must list and stock clients can call.
 * A service added to a module is added here, and every interop test then expects it.
 */
export const HOSTED_SERVICES: Readonly<Record<"tenancy" | "catalog" | "links" | "rendering", readonly string[]>> = {
  tenancy: [
    "qrplatform.tenancy.v1.TenancyService",
    "qrplatform.tenancy.v1.IdempotencyKeyService",
    "qrplatform.tenancy.v1.TenancyAdminService",
  ],
  catalog: [
    "qrplatform.catalog.v1.WorkspaceService",
    "qrplatform.catalog.v1.QrCodeService",
    "qrplatform.catalog.v1.WebhookEndpointService",
  ],
  links: [
    "qrplatform.links.v1.LinkService",
    "qrplatform.links.v1.DomainService",
    "qrplatform.links.v1.RedirectService",
    "qrplatform.links.v1.AnalyticsService",
    "qrplatform.links.v1.OutboxService",
  ],
  rendering: ["qrplatform.rendering.v1.RenderingService"],
};

/** The four running services. */
export interface Platform {
  readonly database: Database;
  readonly tenancy: GrpcServer;
  readonly catalog: GrpcServer;
  readonly links: GrpcServer;
  readonly rendering: GrpcServer;
  /** Closes every server that is still open, then the database. */
  close(): Promise<void>;
}

/** The address a client uses for a server started by {@link serveOne}. */
export const addressOf = (server: GrpcServer) => `127.0.0.1:${server.port}`;

/**
 * Starts tenancy, links, rendering and catalog, one server each, on one test database (each service
 * keeps to its own schema). The catalog reaches the other three through remote gRPC transports that
 * present the service token, as in production.
 */
export async function startPlatform(): Promise<Platform> {
  const database = await openTestDatabase(MIGRATED_PLATFORM);
  const servers: GrpcServer[] = [];
  // Closing a server twice is harmless (the second close finds nothing listening), so a test may
  // close one early and this still closes everything.
  const closeAll = async () => {
    await Promise.all(servers.map((s) => s.close()));
    await database.close();
  };
  try {
    const start = async (module: GrpcModule) => {
      const server = await serveOne(module);
      servers.push(server);
      return server;
    };
    const tenancy = await start(await buildTenancy({ db: database.db, pageTokenSecret: PAGE_TOKEN_SECRET }));
    const links = await start(
      await buildLinks({
        db: database.db,
        pageTokenSecret: PAGE_TOKEN_SECRET,
        shortLinkBaseUrl: "http://qr.test",
        // Domain verification must never leave the machine in a test: no name has TXT records here.
        lookupTxt: async (hostname) => {
          throw Object.assign(new Error(`queryTxt ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
        },
      }),
    );
    const rendering = await start(await buildRendering());
    const remote = (server: GrpcServer) =>
      remoteTransport({ baseUrl: `http://${addressOf(server)}`, token: CREDENTIALS.serviceToken });
    const catalog = await start(
      await buildCatalog({
        db: database.db,
        pageTokenSecret: PAGE_TOKEN_SECRET,
        logger: silentLogger,
        transports: { tenancy: remote(tenancy), links: remote(links), rendering: remote(rendering) },
      }),
    );
    return { database, tenancy, catalog, links, rendering, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
