// The edge keeps authenticated keys in memory: a warm key costs no call to tenancy, yet a revoked key,
// an expired key and a changed account take effect on the next request of every edge replica. The
// cache alone against a stand-in for tenancy, then both shapes with two edges, the processes shape on a
// Redis of its own that is stopped to show the bound on staleness while announcements cannot arrive.
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  AuthenticateApiKeyResponseSchema,
  SubscriptionTier,
  type AuthenticateApiKeyResponse,
} from "@qrplatform/api/tenancy";
import { memoryAccessChanges } from "@qrplatform/platform";
import { freePort, killRedis, scrapeMetrics, startRedis, switchableBus } from "@qrplatform/testing";
import { cachedKeys } from "../src/http/key-cache.js";
import { call, expectError } from "./support/http.js";
import { startStack, type Stack, type StackMode } from "./support/stack.js";

/** A stand-in for tenancy: answers each secret with its key and account, counting the calls. */
function fakeTenancy() {
  const keys = new Map<string, { keyId: string; accountId: string; expireMs?: number }>();
  let calls = 0;
  return {
    keys,
    get calls() {
      return calls;
    },
    ask: async (secret: string): Promise<AuthenticateApiKeyResponse> => {
      calls++;
      const key = keys.get(secret);
      if (!key)
        throw new ConnectError("The API key is missing, malformed, unknown, expired or revoked.", Code.Unauthenticated);
      return create(AuthenticateApiKeyResponseSchema, {
        apiKey: {
          id: key.keyId,
          accountId: key.accountId,
          expireTime: key.expireMs === undefined ? undefined : timestampFromMs(key.expireMs),
        },
        account: { id: key.accountId },
        plan: {},
      });
    },
  };
}

describe("the edge's cache of authenticated keys", () => {
  it("asks tenancy once for a warm key, and again after the key or its account changed", async () => {
    const tenancy = fakeTenancy();
    tenancy.keys.set("k1", { keyId: "key-1", accountId: "acct-1" });
    tenancy.keys.set("k2", { keyId: "key-2", accountId: "acct-1" });
    const bus = memoryAccessChanges();
    const cache = cachedKeys(tenancy.ask, bus);
    await Promise.all([cache.authenticate("k1"), cache.authenticate("k1"), cache.authenticate("k2")]);
    await cache.authenticate("k1");
    expect(tenancy.calls).toBe(2);

    await bus.publish({ apiKeyIds: ["key-1"] });
    await cache.authenticate("k1");
    await cache.authenticate("k2");
    expect(tenancy.calls).toBe(3);

    await bus.publish({ accountIds: ["acct-1"] });
    tenancy.keys.delete("k2");
    await cache.authenticate("k1");
    await expect(cache.authenticate("k2")).rejects.toMatchObject({ code: Code.Unauthenticated });
    expect(tenancy.calls).toBe(5);
    cache.close();
  });

  it("never keeps a refusal, and asks again once the key's own expiry has passed", async () => {
    const tenancy = fakeTenancy();
    let now = 1_000_000;
    const cache = cachedKeys(tenancy.ask, memoryAccessChanges(), { now: () => now });
    await expect(cache.authenticate("k1")).rejects.toMatchObject({ code: Code.Unauthenticated });
    tenancy.keys.set("k1", { keyId: "key-1", accountId: "acct-1", expireMs: now + 500 });
    await cache.authenticate("k1");
    await cache.authenticate("k1");
    expect(tenancy.calls).toBe(2);
    now += 500;
    tenancy.keys.delete("k1");
    await expect(cache.authenticate("k1")).rejects.toMatchObject({ code: Code.Unauthenticated });
    expect(tenancy.calls).toBe(3);
  });

  it("keeps no answer older than a second while announcements cannot arrive, and forgets everything after", async () => {
    const tenancy = fakeTenancy();
    tenancy.keys.set("k1", { keyId: "key-1", accountId: "acct-1" });
    let now = 0;
    const bus = switchableBus(memoryAccessChanges());
    const cache = cachedKeys(tenancy.ask, bus, { now: () => now, unconfirmedTtlMs: 1000 });
    await cache.authenticate("k1");
    bus.up = false;
    now = 999;
    await cache.authenticate("k1");
    expect(tenancy.calls).toBe(1);
    now = 1000;
    await cache.authenticate("k1");
    expect(tenancy.calls).toBe(2);
    // Reconnected: changes may have been missed, so everything goes.
    bus.up = true;
    await bus.publish("everything" as never);
    await cache.authenticate("k1");
    expect(tenancy.calls).toBe(3);
  });

  it("keeps out an answer read before a change that arrived while it was in flight", async () => {
    const tenancy = fakeTenancy();
    tenancy.keys.set("k1", { keyId: "key-1", accountId: "acct-1" });
    const bus = memoryAccessChanges();
    const cache = cachedKeys(tenancy.ask, bus);
    const first = cache.authenticate("k1");
    await bus.publish({ accountIds: ["acct-1"] });
    await first;
    await cache.authenticate("k1");
    expect(tenancy.calls).toBe(2);
    expect(cache.size).toBe(1);
  });
});

const AUTHENTICATIONS = { grpc_service: "qrplatform.tenancy.v1.TenancyService", grpc_method: "AuthenticateApiKey" };

describe.each<StackMode>(["in-process", "processes"])("[%s] two edge replicas", (mode) => {
  let stack: Stack;
  let replica: string;
  let redis: ChildProcess | undefined;
  let redisUrl = "";

  beforeAll(async () => {
    if (mode === "processes") {
      const port = await freePort();
      redis = await startRedis(port);
      redisUrl = `redis://127.0.0.1:${port}`;
    }
    const env = { REDIS_URL: redisUrl };
    stack = await startStack(mode, mode === "processes" ? { env: { tenancy: env, edge: env } } : {});
    replica = (await stack.startEdgeReplica()).baseUrl;
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    if (redis) await killRedis(redis);
  });

  async function newKey(tier = SubscriptionTier.ORIGIN) {
    const { account } = await stack.admin.createAccount({ name: "Replicas", subscriptionTier: tier });
    const { secret, apiKey } = await stack.admin.createApiKey({ accountId: account!.id });
    return { accountId: account!.id, key: secret, keyId: apiKey!.id };
  }
  const both = (key: string) =>
    Promise.all([stack.baseUrl, replica].map((base) => call(base, "GET", "/account", { key })));

  it("refuses a revoked key on the next request of the replica that did not revoke it", async () => {
    const { key, keyId } = await newKey();
    expect((await both(key)).map((res) => res.status)).toEqual([200, 200]);
    await stack.admin.revokeApiKey({ apiKeyId: keyId });
    expectError(await call(replica, "GET", "/account", { key }), 401, "invalid_api_key");
    expectError(await call(stack.baseUrl, "GET", "/account", { key }), 401, "invalid_api_key");
  });

  it("applies a changed hourly limit override, plan limit and plan on the next request of every replica", async () => {
    const { accountId, key } = await newKey();
    expect((await both(key)).map((res) => res.headers.get("ratelimit-limit"))).toEqual(["1000", "1000"]);
    await stack.admin.updateAccount({ accountId, hourlyRequestLimitOverride: 7n });
    const limited = await both(key);
    expect(limited.map((res) => res.headers.get("ratelimit-limit"))).toEqual(["7", "7"]);
    expect(limited.map((res) => res.body.limits.hourly_requests)).toEqual([7, 7]);
    await stack.admin.updateAccount({
      accountId,
      clearHourlyRequestLimitOverride: true,
      subscriptionTier: SubscriptionTier.THRIVE,
    });
    const upgraded = await both(key);
    expect(upgraded.map((res) => res.headers.get("ratelimit-limit"))).toEqual(["5000", "5000"]);
    expect(upgraded.map((res) => res.body.limits.hourly_requests)).toEqual([5000, 5000]);
    await stack.admin.updateAccount({ accountId, subscriptionTier: SubscriptionTier.FREE });
    for (const res of await both(key)) expectError(res, 403, "plan_not_eligible");
  });

  if (mode === "processes") {
    it("asks tenancy once per replica for a warm key", async () => {
      const tenancyMetrics = stack.metricsUrls!.tenancy;
      const { key } = await newKey();
      const before = (await scrapeMetrics(tenancyMetrics)).value("grpc_server_handled_total", AUTHENTICATIONS);
      for (let i = 0; i < 5; i++) await both(key);
      expect((await scrapeMetrics(tenancyMetrics)).value("grpc_server_handled_total", AUTHENTICATIONS) - before).toBe(
        2,
      );
    });

    it("makes a create with a warm key three calls (the catalog, one design check, the link), and two once the design was checked", async () => {
      const { key } = await newKey();
      // A design no earlier test used: the catalog keeps rendering's answers for designs without a logo.
      const design = {
        foreground: `#0000${Math.floor(Math.random() * 0x80)
          .toString(16)
          .padStart(2, "0")}`,
        background: "#fffff0",
      };
      const workspace = await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Hops" } });
      const rpcs = async () => {
        const [tenancy, rendering, links] = await Promise.all(
          ["tenancy", "rendering", "links"].map((name) => scrapeMetrics(stack.metricsUrls![name as "links"])),
        );
        return {
          tenancy: tenancy!.value("grpc_server_handled_total", {
            grpc_service: "qrplatform.tenancy.v1.TenancyService",
          }),
          validateDesign: rendering!.value("grpc_server_handled_total", { grpc_method: "ValidateDesign" }),
          createLink: links!.value("grpc_server_handled_total", { grpc_method: "CreateLink" }),
        };
      };
      const createdWith = async () => {
        const before = await rpcs();
        const created = await call(stack.baseUrl, "POST", `/workspaces/${workspace.body.id}/qr-codes`, {
          key,
          body: { name: "Menu", destination_url: "https://example.com/menu", design },
        });
        expect(created.status).toBe(201);
        expect(created.body.design).toMatchObject(design);
        const after = await rpcs();
        return {
          tenancy: after.tenancy - before.tenancy,
          validateDesign: after.validateDesign - before.validateDesign,
          createLink: after.createLink - before.createLink,
        };
      };
      expect(await createdWith()).toEqual({ tenancy: 0, validateDesign: 1, createLink: 1 });
      expect(await createdWith()).toEqual({ tenancy: 0, validateDesign: 0, createLink: 1 });
    });

    it("answers an image exported before without a render call, and leaves revalidations to rendering", async () => {
      const { key } = await newKey();
      const workspace = await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Exports" } });
      const code = await call(stack.baseUrl, "POST", `/workspaces/${workspace.body.id}/qr-codes`, {
        key,
        body: { name: "Menu", destination_url: "https://example.com/menu" },
      });
      const renders = async () =>
        (await scrapeMetrics(stack.metricsUrls!.rendering)).value("grpc_server_handled_total", {
          grpc_method: "RenderQrCode",
        });
      const path = `/qr-codes/${code.body.id}/export?format=svg&size=200`;
      const before = await renders();
      const first = await call(stack.baseUrl, "GET", path, { key });
      const again = await call(stack.baseUrl, "GET", path, { key });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
      expect(again.headers.get("content-disposition")).toBe(first.headers.get("content-disposition"));
      expect((await renders()) - before).toBe(1);
      const revalidated = await call(stack.baseUrl, "GET", path, {
        key,
        headers: { "if-none-match": first.headers.get("etag")! },
      });
      expect(revalidated.status).toBe(304);
      expect((await renders()) - before).toBe(2);
    });

    it("keeps no key longer than a second while Redis is away", async () => {
      const { key, keyId } = await newKey();
      await both(key);
      await killRedis(redis!);
      await stack.admin.revokeApiKey({ apiKeyId: keyId });
      const revokedAt = Date.now();
      let status = 200;
      while (status === 200 && Date.now() - revokedAt < 5000) {
        status = (await call(replica, "GET", "/account", { key })).status;
        if (status === 200) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(status).toBe(401);
      // The bus notices a silent Redis within a second, and an unconfirmed answer lives a second more.
      expect(Date.now() - revokedAt).toBeLessThan(2500);
    });
  }
});
