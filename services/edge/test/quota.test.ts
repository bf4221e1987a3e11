// Hourly request quotas at the edge: exact under concurrency, announced on every counted response, and
// failing open to per-process counts when Redis goes away. Runs on memory, or on Redis when REDIS_URL is set.
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { QrCodeService } from "@qrplatform/api/catalog";
import { ApiAccess, AuthenticateApiKeyResponseSchema, SubscriptionTier } from "@qrplatform/api/tenancy";
import { createLogger, listenHttp } from "@qrplatform/platform";
import { authenticate } from "../src/http/auth.js";
import { errorHandler } from "../src/http/error-handler.js";
import { hourlyQuota, memoryQuotaStore } from "../src/http/quota.js";
import { getAccountHandler } from "../src/resources/account.js";
import { call, expectError, type ApiResponse } from "./support/http.js";
import { freePort, killRedis, startRedis } from "@qrplatform/testing";
import { startStack, type Stack } from "./support/stack.js";

async function keyWithHourlyLimit(stack: Stack, limit: number) {
  const { account } = await stack.admin.createAccount({ name: "Quota", subscriptionTier: SubscriptionTier.ORIGIN });
  await stack.admin.updateAccount({ accountId: account!.id, hourlyRequestLimitOverride: BigInt(limit) });
  const { secret } = await stack.admin.createApiKey({ accountId: account!.id });
  return { accountId: account!.id, key: secret };
}

function rateLimitHeaders(res: ApiResponse) {
  return {
    limit: Number(res.headers.get("ratelimit-limit")),
    remaining: Number(res.headers.get("ratelimit-remaining")),
    reset: Number(res.headers.get("ratelimit-reset")),
  };
}

describe(`hourly quotas (${process.env.REDIS_URL ? "Redis" : "memory"})`, () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack("in-process");
  }, 120_000);
  afterAll(() => stack?.close());

  it("admits exactly the quota out of 50 concurrent requests, and says so on every response", async () => {
    const quota = 7;
    const { key } = await keyWithHourlyLimit(stack, quota);
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => call(stack.baseUrl, "GET", "/account", { key })),
    );
    const admitted = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    expect([admitted.length, refused.length]).toEqual([quota, 50 - quota]);
    expect(admitted.map((r) => rateLimitHeaders(r).remaining).sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    for (const res of responses) {
      const { limit, reset } = rateLimitHeaders(res);
      expect(limit).toBe(quota);
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(3600);
    }
    for (const res of refused) {
      expectError(res, 429, "rate_limited");
      expect(rateLimitHeaders(res).remaining).toBe(0);
      expect(Number(res.headers.get("retry-after"))).toBe(rateLimitHeaders(res).reset);
      expect(res.body.error.details).toEqual({ limit: quota, reset_seconds: rateLimitHeaders(res).reset });
    }
  });

  it("counts per key, and does not count requests refused for their key", async () => {
    const first = await keyWithHourlyLimit(stack, 2);
    const { secret: second } = await stack.admin.createApiKey({ accountId: first.accountId, scopes: ["account:read"] });
    for (let i = 0; i < 2; i++)
      expect((await call(stack.baseUrl, "GET", "/account", { key: first.key })).status).toBe(200);
    expectError(await call(stack.baseUrl, "GET", "/account", { key: first.key }), 429, "rate_limited");
    expect((await call(stack.baseUrl, "GET", "/account", { key: second })).status).toBe(200);

    const refusedForScope = await call(stack.baseUrl, "GET", "/workspaces", { key: second });
    expectError(refusedForScope, 403, "insufficient_scope");
    expect(refusedForScope.headers.get("ratelimit-limit")).toBeNull();
    const unknown = await call(stack.baseUrl, "GET", "/account", { key: "qrp_unknown" });
    expectError(unknown, 401, "invalid_api_key");
    expect(unknown.headers.get("ratelimit-limit")).toBeNull();
    expect(rateLimitHeaders(await call(stack.baseUrl, "GET", "/account", { key: second })).remaining).toBe(0);
  });

  it("keeps a key's count for the hour when the account's limit is raised and lowered again", async () => {
    const { accountId, key } = await keyWithHourlyLimit(stack, 10);
    const get = async () => rateLimitHeaders(await call(stack.baseUrl, "GET", "/account", { key }));
    const setLimit = (limit: number) =>
      stack.admin.updateAccount({ accountId, hourlyRequestLimitOverride: BigInt(limit) });
    expect([(await get()).remaining, (await get()).remaining, (await get()).remaining]).toEqual([9, 8, 7]);

    await setLimit(1000);
    expect(await get()).toMatchObject({ limit: 1000, remaining: 996 });
    await setLimit(10);
    expect(await get()).toMatchObject({ limit: 10, remaining: 5 });
  });

  it("admits a key refused at a lower limit once the limit is raised above its count", async () => {
    const { accountId, key } = await keyWithHourlyLimit(stack, 2);
    const get = () => call(stack.baseUrl, "GET", "/account", { key });
    expect([(await get()).status, (await get()).status]).toEqual([200, 200]);
    expectError(await get(), 429, "rate_limited");

    // Refused requests count too: this is the key's fourth request of the hour.
    await stack.admin.updateAccount({ accountId, hourlyRequestLimitOverride: 5n });
    const admitted = await get();
    expect(admitted.status).toBe(200);
    expect(rateLimitHeaders(admitted)).toMatchObject({ limit: 5, remaining: 1 });
    expect((await get()).status).toBe(200);
    expectError(await get(), 429, "rate_limited");
  });

  it("refuses everything when an account's limit is set to zero", async () => {
    const { key } = await keyWithHourlyLimit(stack, 0);
    const res = await call(stack.baseUrl, "GET", "/account", { key });
    expectError(res, 429, "rate_limited");
    expect(rateLimitHeaders(res)).toEqual({ limit: 0, remaining: 0, reset: 3600 });
  });
});

describe("hourly quotas when Redis goes away", () => {
  it("fail open to per-process counts with the same limit, answer no 5xx, and share counts again when Redis is back", async () => {
    const port = await freePort();
    let redis = await startRedis(port);
    const stack = await startStack("in-process", { redisUrl: `redis://127.0.0.1:${port}` });
    try {
      const { key } = await keyWithHourlyLimit(stack, 4);
      const get = () => call(stack.baseUrl, "GET", "/account", { key });
      expect(rateLimitHeaders(await get()).remaining).toBe(3);
      expect(rateLimitHeaders(await get()).remaining).toBe(2);

      await killRedis(redis);
      const whileDown: ApiResponse[] = [];
      for (let i = 0; i < 6; i++) whileDown.push(await get());
      expect(whileDown.map((r) => r.status)).toEqual([200, 200, 200, 200, 429, 429]);
      expect(whileDown.map((r) => rateLimitHeaders(r).remaining)).toEqual([3, 2, 1, 0, 0, 0]);

      redis = await startRedis(port);
      let shared: ApiResponse | undefined;
      for (let attempt = 0; attempt < 50; attempt++) {
        await new Promise((r) => setTimeout(r, 100));
        shared = await get();
        if (shared.status === 200) break; // the restarted Redis has no counts: a new window
      }
      expect(shared?.status).toBe(200);
      expect(rateLimitHeaders(shared!).remaining).toBe(3);
    } finally {
      await stack.close();
      await killRedis(redis);
    }
  }, 60_000);

  it("count in memory when a connected Redis stops answering, instead of waiting on it", async () => {
    const port = await freePort();
    const redis = await startRedis(port);
    const stack = await startStack("in-process", { redisUrl: `redis://127.0.0.1:${port}` });
    try {
      const { key } = await keyWithHourlyLimit(stack, 4);
      const get = () => call(stack.baseUrl, "GET", "/account", { key });
      expect(rateLimitHeaders(await get()).remaining).toBe(3);

      // Frozen, not closed: the connection stays up and only the command timeout notices.
      redis.kill("SIGSTOP");
      const whileFrozen = [await get(), await get()];
      expect(whileFrozen.map((r) => r.status)).toEqual([200, 200]);
      expect(whileFrozen.map((r) => rateLimitHeaders(r).remaining)).toEqual([3, 2]);
    } finally {
      redis.kill("SIGCONT");
      await stack.close();
      await killRedis(redis);
    }
  }, 60_000);
});

describe("the hourly limit the edge applies", () => {
  let baseUrl: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    // A stand-in for tenancy whose limit differs from the plan's: the edge must apply tenancy's decision.
    const found = create(AuthenticateApiKeyResponseSchema, {
      apiKey: { id: "key", accountId: "account", scopes: ["account:read"] },
      account: { id: "account" },
      plan: { tier: SubscriptionTier.ORIGIN, publicApiAccess: true, hourlyRequestLimit: 1_000n },
      apiAccess: ApiAccess.ALLOWED,
      hourlyRequestLimit: 2n,
    });
    const logger = createLogger({ service: "test", level: "silent" });
    const app = express();
    app.get(
      "/account",
      authenticate(async () => found, "account:read"),
      hourlyQuota(memoryQuotaStore()),
      getAccountHandler(
        createClient(
          QrCodeService,
          createRouterTransport(({ service }) => service(QrCodeService, { getCapacity: () => ({ capacity: {} }) })),
        ),
      ),
    );
    app.use(errorHandler(logger));
    const server = await listenHttp({ handler: app, host: "127.0.0.1", port: 0, logger, name: "test" });
    baseUrl = `http://127.0.0.1:${server.port}`;
    close = () => server.close();
  });
  afterAll(() => close?.());

  it("is the one tenancy answered with the key, not one the edge works out from the plan", async () => {
    const get = () => fetch(`${baseUrl}/account`, { headers: { authorization: "Bearer qrp_any" } });
    const first = await get();
    expect(first.headers.get("ratelimit-limit")).toBe("2");
    expect(((await first.json()) as { limits: { hourly_requests: number } }).limits.hourly_requests).toBe(2);
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(429);
  });
});
