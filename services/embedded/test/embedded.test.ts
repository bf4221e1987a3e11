import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { SubscriptionTier, TenancyAdminService, TenancyService } from "@qrplatform/api/tenancy";
import { createScratchDatabase, type ScratchDatabase } from "@qrplatform/db/testing";
import { createLogger, remoteTransport } from "@qrplatform/platform";
import { startPlatform, type Platform } from "../src/platform.js";

const logger = createLogger({ service: "test", level: "silent" });

describe("embedded platform", () => {
  let dataDir: string;
  let scratch: ScratchDatabase | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "qrp-embedded-"));
    scratch = await createScratchDatabase();
  });
  afterAll(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await scratch?.drop();
  });

  const start = () =>
    startPlatform({
      dataDir,
      databaseUrl: scratch?.url,
      host: "127.0.0.1",
      port: 0,
      grpcHost: "127.0.0.1",
      grpcPort: 0,
      logger,
    });

  const adminCredential = (platform: Platform) =>
    JSON.parse(readFileSync(platform.adminCredentialPath, "utf8")) as { address: string; token: string };

  it("keeps its credentials owner-only, serves REST and gRPC, and keeps data across restarts", async () => {
    const first = await start();
    let secret: string;
    let accountId: string;
    try {
      expect(statSync(join(dataDir, "secrets.json")).mode & 0o777).toBe(0o600);
      expect(statSync(first.adminCredentialPath).mode & 0o777).toBe(0o600);
      const credential = adminCredential(first);
      expect(credential.address).toBe(first.grpcUrl);

      const admin = createClient(
        TenancyAdminService,
        remoteTransport({ baseUrl: credential.address, token: credential.token }),
      );
      const { account } = await admin.createAccount({ name: "Persisted", subscriptionTier: SubscriptionTier.ORIGIN });
      accountId = account!.id;
      secret = (await admin.createApiKey({ accountId })).secret;

      const res = await fetch(`${first.apiUrl}/account`, { headers: { authorization: `Bearer ${secret}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { id: string }).id).toBe(accountId);

      // The gRPC port is not open to callers without a credential.
      const anonymous = createClient(TenancyService, remoteTransport({ baseUrl: first.grpcUrl, token: "" }));
      const refused = await anonymous.getAccount({ accountId }).catch((e: unknown) => ConnectError.from(e));
      expect(refused).toBeInstanceOf(ConnectError);
      expect((refused as ConnectError).code).toBe(Code.Unauthenticated);
    } finally {
      await first.close();
    }

    const second = await start();
    try {
      expect(adminCredential(second).token).toBe(adminCredential(first).token);
      const res = await fetch(`${second.apiUrl}/account`, { headers: { authorization: `Bearer ${secret}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { id: string }).id).toBe(accountId);
    } finally {
      await second.close();
    }
  });
});
