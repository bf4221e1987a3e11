// The embedded platform for a test: loopback, free ports (metrics included), a throwaway data
// directory, and a scratch Postgres database when DATABASE_URL is set; close() removes them all.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@connectrpc/connect";
import { TenancyAdminService } from "@qrplatform/api/tenancy";
import { createScratchDatabase } from "@qrplatform/db/testing";
import { createLogger, remoteTransport } from "@qrplatform/platform";
import { startPlatform, type Platform } from "../../src/platform.js";

/** A running scratch platform, with tenancy's admin client (as qrctl has it). */
export interface ScratchPlatform extends Platform {
  readonly admin: Client<typeof TenancyAdminService>;
}

export async function startScratchPlatform(): Promise<ScratchPlatform> {
  const dataDir = mkdtempSync(join(tmpdir(), "qrp-scratch-platform-"));
  const scratch = await createScratchDatabase();
  const platform = await startPlatform({
    dataDir,
    databaseUrl: scratch?.url,
    host: "127.0.0.1",
    port: 0,
    grpcHost: "127.0.0.1",
    grpcPort: 0,
    metricsPort: 0,
    logger: createLogger({ service: "test", level: "silent" }),
  });
  const credential = JSON.parse(readFileSync(platform.adminCredentialPath, "utf8")) as {
    address: string;
    token: string;
  };
  return {
    ...platform,
    admin: createClient(TenancyAdminService, remoteTransport({ baseUrl: credential.address, token: credential.token })),
    async close() {
      await platform.close();
      rmSync(dataDir, { recursive: true, force: true });
      await scratch?.drop();
    },
  };
}
