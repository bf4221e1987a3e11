// The REST contract of accounts, keys and workspaces, run against either shape of the platform.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { SubscriptionStatus, SubscriptionTier } from "@qrplatform/api/tenancy";
import { call, expectError, invalidFields } from "./http.js";
import { startStack, type Stack, type StackMode } from "./stack.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function defineRestSuite(mode: StackMode): void {
  let stack: Stack;

  /** A new account on a plan with a key; scopes default to every scope. */
  async function newAccount(tier = SubscriptionTier.ORIGIN, scopes: string[] = []) {
    const { account } = await stack.admin.createAccount({ name: `Acme ${randomBytes(3).toString("hex")}`, subscriptionTier: tier });
    const { secret, apiKey } = await stack.admin.createApiKey({ accountId: account!.id, scopes });
    return { accountId: account!.id, key: secret, keyId: apiKey!.id };
  }

  const api = (method: string, path: string, options?: Parameters<typeof call>[3]) => call(stack.baseUrl, method, path, options);

  beforeAll(async () => {
    stack = await startStack(mode);
  }, 120_000);
  afterAll(() => stack?.close());

  describe(`[${mode}] authentication`, () => {
    it("returns the key's account on GET /account", async () => {
      const { accountId, key } = await newAccount(SubscriptionTier.THRIVE);
      const res = await api("GET", "/account", { key });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: accountId,
        subscription_tier: "thrive",
        subscription_status: "active",
        addons: [],
        limits: { qr_codes: 500, hourly_requests: 5000 },
      });
      expect(res.body.slug).toMatch(/^acme-[0-9a-f]{6}$/);
      expect(res.body.created_at).toMatch(ISO_DATE_TIME);
      expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
      expect(res.headers.get("cache-control")).toBe("no-store");
    });

    it("answers 401 for a missing, malformed, unknown, revoked or expired key", async () => {
      const missing = await api("GET", "/account");
      expectError(missing, 401, "missing_api_key");
      expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer/);

      expectError(await api("GET", "/account", { headers: { authorization: "Basic dXNlcjpwYXNz" } }), 401, "invalid_api_key");
      expectError(await api("GET", "/account", { key: "not-a-key" }), 401, "invalid_api_key");
      expectError(await api("GET", "/account", { key: `qrp_${randomBytes(32).toString("base64url")}` }), 401, "invalid_api_key");

      const { key, keyId } = await newAccount();
      expect((await api("GET", "/account", { key })).status).toBe(200);
      await stack.admin.revokeApiKey({ apiKeyId: keyId });
      expectError(await api("GET", "/account", { key }), 401, "invalid_api_key");
    });

    it("answers 401 once a key has expired", async () => {
      const { account } = await stack.admin.createAccount({ name: "Expiring", subscriptionTier: SubscriptionTier.ORIGIN });
      const { secret } = await stack.admin.createApiKey({ accountId: account!.id, timeToLive: durationFromMs(1000) });
      expect((await api("GET", "/account", { key: secret })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1100));
      expectError(await api("GET", "/account", { key: secret }), 401, "invalid_api_key");
    });

    it("refuses Free-plan keys and inactive accounts with 403", async () => {
      const free = await newAccount(SubscriptionTier.FREE);
      expectError(await api("GET", "/account", { key: free.key }), 403, "plan_not_eligible");
      expectError(await api("GET", "/workspaces", { key: free.key }), 403, "plan_not_eligible");

      const suspended = await newAccount(SubscriptionTier.SCALE);
      await stack.admin.updateAccount({ accountId: suspended.accountId, subscriptionStatus: SubscriptionStatus.SUSPENDED });
      expectError(await api("GET", "/account", { key: suspended.key }), 403, "account_inactive");

      // Upgrading a Free account opens the API to the key it already has.
      await stack.admin.updateAccount({ accountId: free.accountId, subscriptionTier: SubscriptionTier.ORIGIN });
      expect((await api("GET", "/account", { key: free.key })).status).toBe(200);
    });

    it("refuses a route whose scope the key lacks with 403 insufficient_scope", async () => {
      const viewer = await newAccount(SubscriptionTier.ORIGIN, ["role:viewer"]);
      expect((await api("GET", "/workspaces", { key: viewer.key })).status).toBe(200);
      const res = await api("POST", "/workspaces", { key: viewer.key, body: { name: "Nope" } });
      expectError(res, 403, "insufficient_scope");
      expect(res.body.error.details).toEqual({ required_scope: "workspaces:write" });

      const narrow = await newAccount(SubscriptionTier.ORIGIN, ["workspaces:read"]);
      expectError(await api("GET", "/account", { key: narrow.key }), 403, "insufficient_scope");
    });

    it("keeps a sane client request id and replaces an unsafe one", async () => {
      const kept = await api("GET", "/account", { headers: { "x-request-id": "trace-123.abc" } });
      expect(kept.headers.get("x-request-id")).toBe("trace-123.abc");
      expect(kept.body.error.request_id).toBe("trace-123.abc");
      const replaced = await api("GET", "/account", { headers: { "x-request-id": "bad id\twith spaces" } });
      expect(replaced.headers.get("x-request-id")).toMatch(/^req_/);
    });
  });

  describe(`[${mode}] workspaces`, () => {
    it("creates a workspace and reads it back", async () => {
      const { accountId, key } = await newAccount();
      const created = await api("POST", "/workspaces", {
        key,
        body: { name: "  Spring Campaign  ", description: "Posters", logo_url: "https://example.com/logo.png" },
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(UUID),
        account_id: accountId,
        name: "Spring Campaign",
        slug: "spring-campaign",
        description: "Posters",
        logo_url: "https://example.com/logo.png",
        qr_code_count: 0,
        created_at: expect.stringMatching(ISO_DATE_TIME),
        updated_at: expect.stringMatching(ISO_DATE_TIME),
      });
      expect(created.headers.get("location")).toBe(`/api/v1/workspaces/${created.body.id}`);

      const read = await api("GET", `/workspaces/${created.body.id}`, { key });
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);

      const again = await api("POST", "/workspaces", { key, body: { name: "Spring Campaign" } });
      expect(again.body.slug).toMatch(/^spring-campaign-[0-9a-f]{6}$/);
      expect(again.body.description).toBeNull();
      expect(again.body.logo_url).toBeNull();
    });

    it("validates names, URLs, types and unknown fields with per-field details", async () => {
      const { key } = await newAccount();
      const exactly100 = await api("POST", "/workspaces", { key, body: { name: "n".repeat(100) } });
      expect(exactly100.status).toBe(201);

      const tooLong = await api("POST", "/workspaces", { key, body: { name: "n".repeat(101) } });
      expectError(tooLong, 400, "validation_error");
      expect(invalidFields(tooLong)).toEqual(["name"]);

      const missing = await api("POST", "/workspaces", { key, body: {} });
      expect(invalidFields(missing)).toEqual(["name"]);
      const blank = await api("POST", "/workspaces", { key, body: { name: "   " } });
      expect(invalidFields(blank)).toEqual(["name"]);

      const wrongTypes = await api("POST", "/workspaces", { key, body: { name: 5, description: ["x"] } });
      expect(invalidFields(wrongTypes).sort()).toEqual(["description", "name"]);

      const badUrl = await api("POST", "/workspaces", { key, body: { name: "x", logo_url: "javascript:alert(1)" } });
      expect(invalidFields(badUrl)).toEqual(["logo_url"]);

      const readOnly = await api("POST", "/workspaces", { key, body: { name: "x", id: "a", qr_code_count: 9 } });
      expectError(readOnly, 400, "validation_error");
      expect(invalidFields(readOnly).sort()).toEqual(["id", "qr_code_count"]);
      expect(readOnly.body.error.details.fields[0].reason).toBe("unknown_field");

      expectError(await api("POST", "/workspaces", { key, body: [1, 2] }), 400, "validation_error");
    });

    it("answers malformed bodies with 400, 413 and 415", async () => {
      const { key } = await newAccount();
      expectError(
        await api("POST", "/workspaces", { key, body: "{not json", headers: { "content-type": "application/json" } }),
        400,
        "invalid_json",
      );
      expectError(
        await api("POST", "/workspaces", { key, body: "name=x", headers: { "content-type": "application/x-www-form-urlencoded" } }),
        415,
        "unsupported_media_type",
      );
      const huge = await api("POST", "/workspaces", { key, body: { name: "x", description: "d".repeat(70 * 1024) } });
      expectError(huge, 413, "payload_too_large");
    });

    it("updates name, description and logo_url; null clears; absent fields stay", async () => {
      const { key } = await newAccount();
      const { body: created } = await api("POST", "/workspaces", {
        key,
        body: { name: "Old", description: "Keep me", logo_url: "https://example.com/a.png" },
      });
      const renamed = await api("PATCH", `/workspaces/${created.id}`, { key, body: { name: "New" } });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ name: "New", slug: "old", description: "Keep me", logo_url: "https://example.com/a.png" });
      expect(Date.parse(renamed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));

      const cleared = await api("PATCH", `/workspaces/${created.id}`, { key, body: { description: null, logo_url: null } });
      expect(cleared.body).toMatchObject({ name: "New", description: null, logo_url: null });

      const unchanged = await api("PATCH", `/workspaces/${created.id}`, { key, body: {} });
      expect(unchanged.body).toEqual(cleared.body);

      const bad = await api("PATCH", `/workspaces/${created.id}`, { key, body: { name: null, slug: "mine", account_id: created.id } });
      expectError(bad, 400, "validation_error");
      expect(invalidFields(bad).sort()).toEqual(["account_id", "name", "slug"]);
      expect((await api("GET", `/workspaces/${created.id}`, { key })).body).toEqual(cleared.body);
    });

    it("hides another account's workspaces behind 404 and never changes them", async () => {
      const owner = await newAccount();
      const other = await newAccount();
      const { body: workspace } = await api("POST", "/workspaces", { key: owner.key, body: { name: "Private" } });

      expectError(await api("GET", `/workspaces/${workspace.id}`, { key: other.key }), 404, "not_found");
      expectError(await api("PATCH", `/workspaces/${workspace.id}`, { key: other.key, body: { name: "Mine now" } }), 404, "not_found");
      expect((await api("GET", `/workspaces/${workspace.id}`, { key: owner.key })).body.name).toBe("Private");
      expect((await api("GET", "/workspaces", { key: other.key })).body.data).toEqual([]);

      const unknown = await api("GET", "/workspaces/6f1c2b1e-0000-4000-8000-000000000000", { key: owner.key });
      expectError(unknown, 404, "not_found");
      const malformed = await api("GET", "/workspaces/not-a-uuid", { key: owner.key });
      expectError(malformed, 400, "validation_error");
      expect(invalidFields(malformed)).toEqual(["workspace_id"]);
    });

    it("pages through a list in a stable order with opaque cursors", async () => {
      const { key } = await newAccount();
      const names = ["a", "b", "c", "d", "e"];
      for (const name of names) await api("POST", "/workspaces", { key, body: { name } });

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : "?limit=2";
        const page = await api("GET", `/workspaces${query}`, { key });
        expect(page.status).toBe(200);
        expect(Object.keys(page.body).sort()).toEqual(["data", "next_cursor"]);
        expect(page.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.data.map((w: { name: string }) => w.name));
        cursor = page.body.next_cursor;
        pages += 1;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual(names);

      const all = await api("GET", "/workspaces", { key });
      expect(all.body.data.map((w: { name: string }) => w.name)).toEqual(names);
      expect(all.body.next_cursor).toBeNull();
    });

    it("returns 20 items by default and at most 100", async () => {
      const { key } = await newAccount();
      for (let i = 0; i < 21; i++) await api("POST", "/workspaces", { key, body: { name: `w${i}` } });
      const first = await api("GET", "/workspaces", { key });
      expect(first.body.data).toHaveLength(20);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const rest = await api("GET", `/workspaces?cursor=${encodeURIComponent(first.body.next_cursor)}`, { key });
      expect(rest.body.data).toHaveLength(1);
      expect((await api("GET", "/workspaces?limit=100", { key })).body.data).toHaveLength(21);
    });

    it("rejects out-of-range limits and cursors that are forged or from another account", async () => {
      const owner = await newAccount();
      const other = await newAccount();
      for (const limit of ["0", "101", "-1", "abc", "1.5", ""]) {
        const res = await api("GET", `/workspaces?limit=${limit}`, { key: owner.key });
        expectError(res, 400, "validation_error");
        expect(invalidFields(res)).toEqual(["limit"]);
      }
      for (const name of ["x", "y"]) await api("POST", "/workspaces", { key: owner.key, body: { name } });
      const page = await api("GET", "/workspaces?limit=1", { key: owner.key });
      const cursor: string = page.body.next_cursor;

      const foreign = await api("GET", `/workspaces?cursor=${encodeURIComponent(cursor)}`, { key: other.key });
      expectError(foreign, 400, "validation_error");
      expect(invalidFields(foreign)).toEqual(["cursor"]);

      const tampered = cursor.slice(0, -2) + (cursor.endsWith("A") ? "BB" : "AA");
      expect(invalidFields(await api("GET", `/workspaces?cursor=${encodeURIComponent(tampered)}`, { key: owner.key }))).toEqual([
        "cursor",
      ]);
    });
  });

  describe(`[${mode}] routing`, () => {
    it("answers unknown routes with the 404 envelope and wrong methods with 405", async () => {
      const notFound = await api("GET", "/links");
      expectError(notFound, 404, "route_not_found");
      expect(notFound.headers.get("x-request-id")).toBeTruthy();

      const wrong = await api("DELETE", "/workspaces");
      expectError(wrong, 405, "method_not_allowed");
      expect(wrong.headers.get("allow")).toBe("GET, POST, HEAD, OPTIONS");
      const wrongItem = await api("PUT", "/workspaces/6f1c2b1e-0000-4000-8000-000000000000", { body: {} });
      expectError(wrongItem, 405, "method_not_allowed");
      expect(wrongItem.headers.get("allow")).toBe("GET, PATCH, HEAD, OPTIONS");
      expectError(await api("POST", "/account"), 405, "method_not_allowed");
    });

    it("reports liveness and readiness outside the API", async () => {
      const root = stack.baseUrl.replace(/\/api\/v1$/, "");
      const live = await call(root, "GET", "/healthz");
      expect(live).toMatchObject({ status: 200, body: { status: "ok" } });
      const ready = await call(root, "GET", "/readyz");
      expect(ready).toMatchObject({ status: 200, body: { status: "ready", services: { tenancy: "serving", catalog: "serving" } } });
    });
  });
}
