import { join } from "node:path";
import type { Transport } from "@connectrpc/connect";
import { buildCatalog } from "@qrplatform/catalog";
import { openDatabase } from "@qrplatform/db";
import { buildEdge, DEFAULT_MAX_BODY_BYTES } from "@qrplatform/edge";
import { buildLinks } from "@qrplatform/links";
import {
  inProcessTransport,
  listenHttp,
  serveGrpc,
  type GrpcModule,
  type InternalCredentials,
  type Logger,
} from "@qrplatform/platform";
import { buildRendering } from "@qrplatform/rendering";
import { buildTenancy } from "@qrplatform/tenancy";
import { loadOrCreateSecrets, writeAdminCredential } from "./secrets.js";

/** Where and how the embedded platform runs. */
export interface PlatformOptions {
  /** Where PGlite's files, the secrets and the admin credential live. */
  dataDir: string;
  /** A Postgres server to use instead of PGlite. */
  databaseUrl?: string | undefined;
  /** The REST edge's address. */
  host: string;
  port: number;
  /** The gRPC address of all four services, for qrctl and internal clients; loopback by default. */
  grpcHost: string;
  grpcPort: number;
  logger: Logger;
  maxBodyBytes?: number;
}

/** A running embedded platform. */
export interface Platform {
  /** The REST API's base URL, ending in /api/v1. */
  readonly apiUrl: string;
  /** The base URL of the gRPC port. */
  readonly grpcUrl: string;
  /** The file holding the admin credential for qrctl. */
  readonly adminCredentialPath: string;
  /** Drains HTTP and gRPC, then closes the database. */
  close(): Promise<void>;
}

/**
 * The whole platform in one process: the four services wired through in-process transports (the same
 * handlers, clients and interceptors as the distributed mode), the REST edge, and a gRPC port.
 */
export async function startPlatform(options: PlatformOptions): Promise<Platform> {
  const { logger } = options;
  const secrets = loadOrCreateSecrets(options.dataDir);
  const credentials: InternalCredentials = { serviceToken: secrets.serviceToken, adminToken: secrets.adminToken };
  const database = await openDatabase({ databaseUrl: options.databaseUrl, dataDir: join(options.dataDir, "pglite") });

  const local = (modules: GrpcModule[]): Transport =>
    inProcessTransport({ modules, credentials, logger, token: credentials.serviceToken });

  const tenancy = await buildTenancy({ db: database.db, pageTokenSecret: secrets.pageTokenSecret });
  const links = await buildLinks({ db: database.db });
  const rendering = await buildRendering();
  const catalog = await buildCatalog({
    db: database.db,
    pageTokenSecret: secrets.pageTokenSecret,
    transports: { tenancy: local([tenancy]), links: local([links]), rendering: local([rendering]) },
  });
  const modules = [tenancy, catalog, links, rendering];

  const grpc = await serveGrpc({ modules, credentials, logger, host: options.grpcHost, port: options.grpcPort });
  const grpcUrl = `http://${urlHost(options.grpcHost)}:${grpc.port}`;
  const adminCredentialPath = writeAdminCredential(options.dataDir, grpcUrl, credentials.adminToken);

  let draining = false;
  const edge = buildEdge({
    transports: { tenancy: local([tenancy]), catalog: local([catalog]) },
    logger,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    isDraining: () => draining,
  });
  const http = await listenHttp({ handler: edge, host: options.host, port: options.port, logger, name: "REST edge" });

  return {
    apiUrl: `http://${urlHost(options.host)}:${http.port}/api/v1`,
    grpcUrl,
    adminCredentialPath,
    async close() {
      draining = true;
      await Promise.all([http.close(), grpc.close()]);
      await database.close();
    },
  };
}

/** A host as it appears in a URL a user can open: wildcard addresses become loopback. */
function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}
