// Authentication as an attacker sees it: every key that is not a live key answers the same 401, and no
// key, good or bad, ever reaches a log line.
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { createLogger } from "@qrplatform/platform";
import { call, expectError, type ApiResponse } from "./support/http.js";
import { startStack, type Stack } from "./support/stack.js";

describe("authentication", () => {
  let stack: Stack;
  const logLines: string[] = [];

  beforeAll(async () => {
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    stack = await startStack("in-process", { logger: createLogger({ service: "test", level: "debug", destination }) });
  }, 120_000);
  afterAll(() => stack?.close());

  async function liveKey(options: { timeToLiveMs?: number } = {}) {
    const { account } = await stack.admin.createAccount({
      name: `Auth ${randomBytes(3).toString("hex")}`,
      subscriptionTier: SubscriptionTier.ORIGIN,
    });
    const created = await stack.admin.createApiKey({
      accountId: account!.id,
      timeToLive: options.timeToLiveMs ? durationFromMs(options.timeToLiveMs) : undefined,
    });
    return { secret: created.secret, keyId: created.apiKey!.id };
  }

  /** What a client can compare between two refusals: everything but the request id. */
  const comparable = (res: ApiResponse) => ({
    status: res.status,
    body: { ...res.body, error: { ...res.body.error, request_id: "<id>" } },
    authenticate: res.headers.get("www-authenticate"),
    length: res.headers.get("content-length"),
  });

  it("answers unknown, malformed, expired and revoked keys with the same 401", async () => {
    const revoked = await liveKey();
    await stack.admin.revokeApiKey({ apiKeyId: revoked.keyId });
    const expired = await liveKey({ timeToLiveMs: 1000 });
    await new Promise((r) => setTimeout(r, 1100));
    const unknownSameShape = `qrp_${randomBytes(32).toString("base64url")}`;

    const refusals = await Promise.all(
      [unknownSameShape, revoked.secret, expired.secret, "not-a-key", `${revoked.secret}x`, "qrp_"].map((secret) =>
        call(stack.baseUrl, "GET", "/account", { headers: { authorization: `Bearer ${secret}` } }),
      ),
    );
    for (const res of refusals) expectError(res, 401, "invalid_api_key");
    const [first, ...rest] = refusals.map(comparable);
    for (const other of rest) expect(other).toEqual(first);
    // A missing header says only that: there is nothing to compare.
    expectError(await call(stack.baseUrl, "GET", "/account"), 401, "missing_api_key");
  });

  it("never writes a key to the logs, accepted or refused", async () => {
    const { secret } = await liveKey();
    const refusedSecret = `qrp_${randomBytes(32).toString("base64url")}`;
    expect((await call(stack.baseUrl, "GET", "/account", { key: secret })).status).toBe(200);
    expect((await call(stack.baseUrl, "GET", "/account", { key: refusedSecret })).status).toBe(401);
    await call(stack.baseUrl, "POST", "/workspaces", { key: secret, body: { name: "x", description: 42 } });
    const logs = logLines.join("");
    expect(logs).toContain("[redacted]");
    expect(logs).toContain('"url":"/api/v1/account"');
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain(refusedSecret);
    expect(logs).not.toContain(secret.slice(4, 24));
  });
});
