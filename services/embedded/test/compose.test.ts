import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { SubscriptionTier, TenancyAdminService } from "@qrplatform/api/tenancy";
import type { Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { createLogger, type HttpServer, inProcessTransport, listenHttp } from "@qrplatform/platform";
import { type ComposedPlatform, composePlatform } from "../src/compose.js";

const logger = createLogger({ service: "test", level: "silent" });
const secret = () => randomBytes(32).toString("hex");

// The composition root on its own, with the ports a test passes in: what npm start and the tests'
// in-process stack both build on.
describe("composePlatform", () => {
  const secrets = {
    serviceToken: secret(),
    adminToken: secret(),
    pageTokenSecret: secret(),
    visitorKeySecret: secret(),
  };
  let database: Database;
  let platform: ComposedPlatform;
  let http: HttpServer;
  let origin: string;

  beforeAll(async () => {
    // Unmigrated: each service migrates its own schema as the platform builds it.
    database = await openTestDatabase();
    let listener: ComposedPlatform["listener"] = (_req, res) => res.writeHead(503).end();
    http = await listenHttp({
      handler: (req, res) => listener(req, res),
      host: "127.0.0.1",
      port: 0,
      logger,
      name: "test",
    });
    origin = `http://127.0.0.1:${http.port}`;
    platform = await composePlatform(
      { database, secrets, logger },
      { shortLinkBaseUrl: origin, workers: { reconciler: false, webhooks: false } },
    );
    listener = platform.listener;
  });
  afterAll(async () => {
    await http?.close();
    await platform?.close();
    await database?.close();
  });

  it("serves its modules to the admin credential it was given, and no other", async () => {
    const admin = (token: string) =>
      createClient(
        TenancyAdminService,
        inProcessTransport({ modules: [platform.modules.tenancy], credentials: platform.credentials, logger, token }),
      );
    const { account } = await admin(secrets.adminToken).createAccount({
      name: "Composed",
      subscriptionTier: SubscriptionTier.ORIGIN,
    });
    expect(account?.name).toBe("Composed");
    await expect(
      admin(secret()).createAccount({ name: "Stranger", subscriptionTier: SubscriptionTier.ORIGIN }),
    ).rejects.toThrow();
  });

  it("answers the API in the error envelope and short links through the redirector on one listener", async () => {
    const api = await fetch(`${origin}/api/v1/account`);
    expect(api.status).toBe(401);
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe("missing_api_key");
    const shortLink = await fetch(`${origin}/no-such-slug`, { redirect: "manual" });
    expect(shortLink.status).toBe(404);
  });

  it("turns /readyz to 503 once it drains, while /healthz stays alive", async () => {
    expect((await fetch(`${origin}/readyz`)).status).toBe(200);
    platform.drain();
    expect((await fetch(`${origin}/readyz`)).status).toBe(503);
    expect((await fetch(`${origin}/healthz`)).status).toBe(200);
  });
});
