// The REST contract of accounts, keys and workspaces, run against either shape of the platform.
import { randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { durationFromMs, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Addon, SubscriptionStatus, SubscriptionTier } from "@qrplatform/api/tenancy";
import type { ConnectError } from "@connectrpc/connect";
import { errorInfoOf } from "@qrplatform/platform";
import { settledCount } from "@qrplatform/testing";
import sharp from "sharp";
import { call, expectError, invalidFields, typedClient } from "./http.js";
import { describeDynamicCodes } from "./dynamic-codes-suite.js";
import { startStack, type Stack, type StackMode } from "./stack.js";
import { jsqrDecode, jsqrSymbol, rsvgToPng, zbarDecode } from "@qrplatform/testing/decoders";
import { hugeBlankPng } from "@qrplatform/testing/huge-png";
import { newAccount as newTestAccount } from "./accounts.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A real 1x1 PNG, as a logo. */
const TINY_PNG =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function defineRestSuite(mode: StackMode): void {
  let stack: Stack;

  /** A new account on a plan with a key; scopes default to every scope. */
  const newAccount = (tier = SubscriptionTier.ORIGIN, scopes: string[] = []) =>
    newTestAccount(stack.admin, { tier, scopes });

  const api = (method: string, path: string, options?: Parameters<typeof call>[3]) =>
    call(stack.baseUrl, method, path, options);

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
        usage: { qr_codes: 0 },
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

      expectError(
        await api("GET", "/account", { headers: { authorization: "Basic dXNlcjpwYXNz" } }),
        401,
        "invalid_api_key",
      );
      expectError(await api("GET", "/account", { key: "not-a-key" }), 401, "invalid_api_key");
      expectError(
        await api("GET", "/account", { key: `qrp_${randomBytes(32).toString("base64url")}` }),
        401,
        "invalid_api_key",
      );

      const { key, keyId } = await newAccount();
      expect((await api("GET", "/account", { key })).status).toBe(200);
      await stack.admin.revokeApiKey({ apiKeyId: keyId });
      expectError(await api("GET", "/account", { key }), 401, "invalid_api_key");
    });

    it("answers 401 once a key has expired", async () => {
      const { account } = await stack.admin.createAccount({
        name: "Expiring",
        subscriptionTier: SubscriptionTier.ORIGIN,
      });
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
      await stack.admin.updateAccount({
        accountId: suspended.accountId,
        subscriptionStatus: SubscriptionStatus.SUSPENDED,
      });
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
      expect(readOnly.body.error.details.fields.map((f: { reason: string }) => f.reason)).toEqual([
        "read_only",
        "read_only",
      ]);
      const unknown = await api("POST", "/workspaces", { key, body: { name: "x", colour: "red" } });
      expect(unknown.body.error.details.fields).toEqual([
        { field: "colour", reason: "unknown_field", message: expect.any(String) },
      ]);

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
        await api("POST", "/workspaces", {
          key,
          body: "name=x",
          headers: { "content-type": "application/x-www-form-urlencoded" },
        }),
        415,
        "unsupported_media_type",
      );
      const huge = await api("POST", "/workspaces", { key, body: { name: "x", description: "d".repeat(70 * 1024) } });
      expectError(huge, 413, "payload_too_large");
    });

    it("reads gzip bodies, refuses ones that do not decode or inflate past the limit, and unknown encodings", async () => {
      const { key } = await newAccount();
      const json = { "content-type": "application/json" };
      const gzipped = await api("POST", "/workspaces", {
        key,
        body: gzipSync(JSON.stringify({ name: "Zipped" })),
        headers: { ...json, "content-encoding": "gzip" },
      });
      expect(gzipped.status).toBe(201);
      expect(gzipped.body.name).toBe("Zipped");

      const notGzip = await api("POST", "/workspaces", {
        key,
        body: JSON.stringify({ name: "x" }),
        headers: { ...json, "content-encoding": "gzip" },
      });
      expectError(notGzip, 400, "invalid_json");
      const corrupt = gzipSync(JSON.stringify({ name: "x" }));
      corrupt.fill(0xff, 10, 14);
      expectError(
        await api("POST", "/workspaces", { key, body: corrupt, headers: { ...json, "content-encoding": "gzip" } }),
        400,
        "invalid_json",
      );
      const notBrotli = await api("POST", "/workspaces", {
        key,
        body: "{}",
        headers: { ...json, "content-encoding": "br" },
      });
      expectError(notBrotli, 400, "invalid_json");

      // 20 MB of spaces inside a valid document compress to about 20 KB: the limit applies to what they inflate to.
      const bomb = gzipSync(`{"name": "bomb"${" ".repeat(20 * 1024 * 1024)}}`);
      expect(bomb.length).toBeLessThan(64 * 1024);
      expectError(
        await api("POST", "/workspaces", { key, body: bomb, headers: { ...json, "content-encoding": "gzip" } }),
        413,
        "payload_too_large",
      );

      for (const encoding of ["compress", "gzip, gzip", "x-unknown"]) {
        const unknown = await api("POST", "/workspaces", {
          key,
          body: "{}",
          headers: { ...json, "content-encoding": encoding },
        });
        expectError(unknown, 415, "unsupported_media_type");
      }
      expect((await api("GET", "/workspaces", { key })).body.data.map((w: { name: string }) => w.name)).toEqual([
        "Zipped",
      ]);
    });

    it("bounds validation errors however many fields are wrong and however deep the body nests", async () => {
      const { key } = await newAccount();
      const { body: workspace } = await api("POST", "/workspaces", { key, body: { name: "Codes" } });
      const create = (body: unknown) =>
        api("POST", `/workspaces/${workspace.id}/qr-codes`, {
          key,
          body: JSON.stringify(body),
          headers: { "content-type": "application/json" },
        });
      const expectBounded = (res: Awaited<ReturnType<typeof api>>, omitted: number) => {
        expectError(res, 400, "validation_error");
        expect(res.body.error.details.fields).toHaveLength(20);
        expect(res.body.error.details.omitted_fields).toBe(omitted);
        expect(JSON.stringify(res.body).length).toBeLessThan(8 * 1024);
      };

      // The most elements that fit in the stack's 64 KiB body: refused by the edge's own schema.
      const numbers = Array.from({ length: 32_000 }, () => 1);
      expectBounded(await create({ name: "x", destination_url: "https://example.com", tags: numbers }), 32_000 - 20);
      // Strings the edge passes on and the catalog refuses: one problem for the list, not one per tag.
      const empty = Array.from({ length: 21_000 }, () => "");
      const refused = await create({ name: "x", destination_url: "https://example.com", tags: empty });
      expectError(refused, 400, "validation_error");
      expect(JSON.stringify(refused.body).length).toBeLessThan(8 * 1024);

      // Written as text: JSON.stringify itself cannot nest so deep. 8,000 levels of arrays and 4,000 of
      // objects fit the stack's 64 KiB body, and are refused before anything parses or walks them.
      const nestedBody = (depth: number) => {
        const deep = `${"[".repeat(depth)}${"]".repeat(depth)}`;
        const objects = Math.floor(depth / 2);
        return `{"name": "x", "destination_url": "https://example.com", "tags": [${deep}], "design": ${deep}, "utm": ${'{"a":'.repeat(objects)}1${"}".repeat(objects)}}`;
      };
      const post = (body: string) =>
        api("POST", `/workspaces/${workspace.id}/qr-codes`, {
          key,
          body,
          headers: { "content-type": "application/json" },
        });
      const nested = await post(nestedBody(8_000));
      expectError(nested, 400, "json_too_deep");
      expect(nested.body.error.details).toEqual({ max_depth: 64 });
      // Within the bound the schema refuses it, with an answer as small.
      const shallow = await post(nestedBody(60));
      expectError(shallow, 400, "validation_error");
      expect(JSON.stringify(shallow.body).length).toBeLessThan(8 * 1024);
      expect((await api("GET", `/workspaces/${workspace.id}/qr-codes`, { key })).body.data).toEqual([]);
    });

    it("updates name, description and logo_url; null clears; absent fields stay", async () => {
      const { key } = await newAccount();
      const { body: created } = await api("POST", "/workspaces", {
        key,
        body: { name: "Old", description: "Keep me", logo_url: "https://example.com/a.png" },
      });
      const renamed = await api("PATCH", `/workspaces/${created.id}`, { key, body: { name: "New" } });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({
        name: "New",
        slug: "old",
        description: "Keep me",
        logo_url: "https://example.com/a.png",
      });
      expect(Date.parse(renamed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));

      const cleared = await api("PATCH", `/workspaces/${created.id}`, {
        key,
        body: { description: null, logo_url: null },
      });
      expect(cleared.body).toMatchObject({ name: "New", description: null, logo_url: null });

      const unchanged = await api("PATCH", `/workspaces/${created.id}`, { key, body: {} });
      expect(unchanged.body).toEqual(cleared.body);

      const bad = await api("PATCH", `/workspaces/${created.id}`, {
        key,
        body: { name: null, slug: "mine", account_id: created.id },
      });
      expectError(bad, 400, "validation_error");
      expect(invalidFields(bad).sort()).toEqual(["account_id", "name", "slug"]);
      expect((await api("GET", `/workspaces/${created.id}`, { key })).body).toEqual(cleared.body);
    });

    it("answers each of many concurrent updates with the values it wrote", async () => {
      const { key } = await newAccount();
      const { body: created } = await api("POST", "/workspaces", { key, body: { name: "Race" } });
      const names = Array.from({ length: 12 }, (_, i) => `Race ${i}`);
      const answers = await Promise.all(
        names.map((name) => api("PATCH", `/workspaces/${created.id}`, { key, body: { name } })),
      );
      expect(answers.map((answer) => answer.body.name)).toEqual(names);
      expect(names).toContain((await api("GET", `/workspaces/${created.id}`, { key })).body.name);
    });

    it("hides another account's workspaces behind 404 and never changes them", async () => {
      const owner = await newAccount();
      const other = await newAccount();
      const { body: workspace } = await api("POST", "/workspaces", { key: owner.key, body: { name: "Private" } });

      expectError(await api("GET", `/workspaces/${workspace.id}`, { key: other.key }), 404, "not_found");
      expectError(
        await api("PATCH", `/workspaces/${workspace.id}`, { key: other.key, body: { name: "Mine now" } }),
        404,
        "not_found",
      );
      expect((await api("GET", `/workspaces/${workspace.id}`, { key: owner.key })).body.name).toBe("Private");
      expect((await api("GET", "/workspaces", { key: other.key })).body.data).toEqual([]);

      const unknown = await api("GET", "/workspaces/6f1c2b1e-0000-4000-8000-000000000000", { key: owner.key });
      expectError(unknown, 404, "not_found");
      const malformed = await api("GET", "/workspaces/not-a-uuid", { key: owner.key });
      expectError(malformed, 400, "validation_error");
      expect(invalidFields(malformed)).toEqual(["workspace_id"]);
    });

    it("deletes an empty workspace with 200 like every delete; reading or deleting it again is 404", async () => {
      const { key } = await newAccount();
      const { body: workspace } = await api("POST", "/workspaces", { key, body: { name: "Short-lived" } });
      const { body: kept } = await api("POST", "/workspaces", { key, body: { name: "Kept" } });

      const deleted = await api("DELETE", `/workspaces/${workspace.id.toUpperCase()}`, { key });
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ id: workspace.id, deleted: true });
      expectError(await api("GET", `/workspaces/${workspace.id}`, { key }), 404, "not_found");
      const again = await api("DELETE", `/workspaces/${workspace.id}`, { key });
      expectError(again, 404, "not_found");
      expect(again.body.error.details).toEqual({ resource: "workspace" });
      expect((await api("GET", "/workspaces", { key })).body.data.map((w: { id: string }) => w.id)).toEqual([kept.id]);
      // Nothing can be put in it any more.
      const late = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
        key,
        body: { name: "Late", destination_url: "https://example.com/" },
      });
      expectError(late, 404, "not_found");

      const malformed = await api("DELETE", "/workspaces/not-a-uuid", { key });
      expectError(malformed, 400, "validation_error");
      expect(invalidFields(malformed)).toEqual(["workspace_id"]);
    });

    it("refuses to delete a workspace that holds QR codes with 409 workspace_not_empty, and deletes it once they are gone", async () => {
      const { key } = await newAccount();
      const { body: workspace } = await api("POST", "/workspaces", { key, body: { name: "Printed" } });
      const { body: other } = await api("POST", "/workspaces", { key, body: { name: "Elsewhere" } });
      const codes: { id: string }[] = [];
      for (const name of ["Menu", "Door"]) {
        const created = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
          key,
          body: { name, destination_url: "https://example.com/" },
        });
        expect(created.status).toBe(201);
        codes.push(created.body);
      }
      const refused = await api("DELETE", `/workspaces/${workspace.id}`, { key });
      expectError(refused, 409, "workspace_not_empty");
      expect(refused.body.error.details).toEqual({ qr_code_count: 2 });
      // Nothing was touched: the workspace and its codes.
      expect((await api("GET", `/workspaces/${workspace.id}`, { key })).body.qr_code_count).toBe(2);
      expect((await api("GET", "/qr-codes", { key })).body.data.map((c: { id: string }) => c.id)).toEqual(
        codes.map((c) => c.id),
      );

      // One code deleted, the other moved away: the workspace is empty and goes.
      expect((await api("DELETE", `/qr-codes/${codes[0]!.id}`, { key })).status).toBe(200);
      expectError(await api("DELETE", `/workspaces/${workspace.id}`, { key }), 409, "workspace_not_empty");
      expect((await api("PATCH", `/qr-codes/${codes[1]!.id}`, { key, body: { workspace_id: other.id } })).status).toBe(
        200,
      );
      expect((await api("DELETE", `/workspaces/${workspace.id}`, { key })).status).toBe(200);
      expect((await api("GET", `/qr-codes/${codes[1]!.id}`, { key })).body.workspace_id).toBe(other.id);
    });

    it("hides another account's workspace from a delete behind 404 and refuses keys without workspaces:write", async () => {
      const owner = await newAccount();
      const other = await newAccount();
      const { body: workspace } = await api("POST", "/workspaces", { key: owner.key, body: { name: "Mine" } });
      expectError(await api("DELETE", `/workspaces/${workspace.id}`, { key: other.key }), 404, "not_found");

      const viewerKey = (await stack.admin.createApiKey({ accountId: owner.accountId, scopes: ["role:viewer"] }))
        .secret;
      const refused = await api("DELETE", `/workspaces/${workspace.id}`, { key: viewerKey });
      expectError(refused, 403, "insufficient_scope");
      expect(refused.body.error.details).toEqual({ required_scope: "workspaces:write" });

      expect((await api("GET", `/workspaces/${workspace.id}`, { key: owner.key })).body.name).toBe("Mine");
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
      expect(
        invalidFields(await api("GET", `/workspaces?cursor=${encodeURIComponent(tampered)}`, { key: owner.key })),
      ).toEqual(["cursor"]);
    });
  });

  describe(`[${mode}] QR codes`, () => {
    /** A new Origin account with a workspace to put codes in. */
    async function accountWithWorkspace(tier = SubscriptionTier.ORIGIN) {
      const account = await newAccount(tier);
      const { body: workspace } = await api("POST", "/workspaces", { key: account.key, body: { name: "Codes" } });
      return { ...account, workspaceId: workspace.id as string };
    }

    const createCode = (key: string, workspaceId: string, body: Record<string, unknown>) =>
      api("POST", `/workspaces/${workspaceId}/qr-codes`, {
        key,
        body: { name: "Poster", destination_url: "https://example.com/menu", ...body },
      });

    /** Follows a short link once, without following the redirect. */
    const scan = (url: string, headers: Record<string, string> = {}) => fetch(url, { redirect: "manual", headers });

    it("creates a code with its short link, design defaults and utm, and the link redirects", async () => {
      const { accountId, key, workspaceId } = await accountWithWorkspace();
      const created = await createCode(key, workspaceId, {
        name: "  Spring poster ",
        destination_url: "https://example.com/menu?table=4",
        tags: ["print", "spring", "print"],
        utm: { source: "poster", campaign: "spring" },
      });
      expect(created.status).toBe(201);
      const code = created.body;
      expect(code).toMatchObject({
        account_id: accountId,
        workspace_id: workspaceId,
        name: "Spring poster",
        destination_url: "https://example.com/menu?table=4",
        status: "active",
        tags: ["print", "spring"],
        total_scans: 0,
        utm: { source: "poster", campaign: "spring" },
        design: {
          foreground: "#000000",
          background: "#ffffff",
          style: "square",
          errorCorrection: "M",
          size: 1024,
          cornerSquareShape: "square",
          cornerDotShape: "square",
          frame: { enabled: false },
          logo: null,
        },
      });
      expect(code.id).toMatch(UUID);
      expect(code.vanity_url).toBe(code.canonical_url);
      expect(code.canonical_url).toMatch(/\/[23456789abcdefghjkmnpqrstuvwxyz]{8}$/);
      expect(code.qr_image_url).toBe(`${stack.baseUrl}/qr-codes/${code.id}/export`);
      expect(created.headers.get("location")).toBe(`/api/v1/qr-codes/${code.id}`);

      const redirect = await scan(code.vanity_url);
      expect(redirect.status).toBe(302);
      expect(redirect.headers.get("location")).toBe(
        "https://example.com/menu?table=4&utm_source=poster&utm_campaign=spring",
      );
      expect(redirect.headers.get("cache-control")).toBe("no-store");

      expect((await api("GET", `/qr-codes/${code.id}`, { key })).body).toEqual(code);
      expect((await api("GET", `/workspaces/${workspaceId}`, { key })).body.qr_code_count).toBe(1);
    });

    it("validates the body with per-field details and leaves nothing behind", async () => {
      const { key, workspaceId } = await accountWithWorkspace();
      const cases: [Record<string, unknown>, string[]][] = [
        [{ name: "n".repeat(201) }, ["name"]],
        [{ destination_url: "javascript:alert(1)" }, ["destination_url"]],
        [{ destination_url: "data:text/html,<script>alert(1)</script>" }, ["destination_url"]],
        [{ destination_url: "https://user:pw@example.com/" }, ["destination_url"]],
        [{ destination_url: "https://example.com/\r\nSet-Cookie: x=1" }, ["destination_url"]],
        [{ destination_url: `https://example.com/${"a".repeat(2100)}` }, ["destination_url"]],
        [{ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, ["tags"]],
        [{ design: { foreground: "black" } }, ["design.foreground"]],
        [{ design: { style: "zigzag" } }, ["design.style"]],
        [{ design: { frame: { labelTop: "x".repeat(31) } } }, ["design.frame.labelTop"]],
        [{ design: { sparkle: true } }, ["design.sparkle"]],
        // Beyond int32, below the design's bounds, beyond every integer width, and not an integer.
        ...[2147483648, -1, 1e20, 1.5].flatMap((n): [Record<string, unknown>, string[]][] => [
          [{ design: { size: n } }, ["design.size"]],
          [{ design: { frame: { borderThickness: n } } }, ["design.frame.borderThickness"]],
        ]),
        [{ vanity_slug: "menu" }, ["vanity_domain_id"]],
        [{ id: "x", status: "paused", total_scans: 5 }, ["id", "status", "total_scans"]],
      ];
      for (const [body, fields] of cases) {
        const res = await createCode(key, workspaceId, body);
        expectError(res, 400, "validation_error");
        expect(invalidFields(res).sort(), JSON.stringify(body).slice(0, 80)).toEqual(fields);
      }
      const unknownDomain = await createCode(key, workspaceId, {
        vanity_domain_id: "6f1c2b1e-0000-4000-8000-000000000000",
        vanity_slug: "menu",
      });
      expectError(unknownDomain, 404, "not_found");
      expect((await api("GET", "/qr-codes", { key })).body.data).toEqual([]);
      expect((await api("GET", `/workspaces/${workspaceId}`, { key })).body.qr_code_count).toBe(0);
    });

    it("searches names case-insensitively and filters by status, in both lists, with cursors bound to the filter", async () => {
      const { accountId, key, workspaceId } = await accountWithWorkspace();
      const { body: other } = await api("POST", "/workspaces", { key, body: { name: "Other" } });
      const made: Record<string, string> = {};
      for (const [name, workspace] of [
        ["Spring Menu", workspaceId],
        ["menu board", other.id],
        ["Café MENÜ", workspaceId],
        ["Poster 100%_off", workspaceId],
        ["Flyer", workspaceId],
      ] as const) {
        made[name] = (await createCode(key, workspace, { name })).body.id;
      }
      await api("PATCH", `/qr-codes/${made["menu board"]}`, { key, body: { status: "paused" } });
      const names = async (path: string) => {
        const res = await api("GET", path, { key });
        expect(res.status, path).toBe(200);
        return res.body.data.map((code: { name: string }) => code.name);
      };
      expect(await names("/qr-codes?q=MENU")).toEqual(["Spring Menu", "menu board"]);
      expect(await names(`/qr-codes?q=${encodeURIComponent("menü")}`)).toEqual(["Café MENÜ"]);
      // The text is matched as it is: % and _ are no wildcards.
      expect(await names("/qr-codes?q=%25")).toEqual(["Poster 100%_off"]);
      expect(await names("/qr-codes?q=_")).toEqual(["Poster 100%_off"]);
      expect(await names("/qr-codes?q=")).toHaveLength(5);
      expect(await names("/qr-codes?status=paused")).toEqual(["menu board"]);
      expect(await names("/qr-codes?q=menu&status=active")).toEqual(["Spring Menu"]);
      expect(await names(`/qr-codes?q=menu&workspace_id=${other.id}`)).toEqual(["menu board"]);
      expect(await names(`/workspaces/${workspaceId}/qr-codes?q=menu`)).toEqual(["Spring Menu"]);
      expect(await names(`/workspaces/${other.id}/qr-codes?status=active`)).toEqual([]);
      const stranger = await newAccount();
      expect((await api("GET", "/qr-codes?q=menu", { key: stranger.key })).body.data).toEqual([]);

      const first = await api("GET", "/qr-codes?q=menu&limit=1", { key });
      expect(first.body.data.map((code: { name: string }) => code.name)).toEqual(["Spring Menu"]);
      const cursor = encodeURIComponent(first.body.next_cursor);
      expect(await names(`/qr-codes?q=menu&limit=1&cursor=${cursor}`)).toEqual(["menu board"]);
      for (const filters of ["q=men", "", "q=menu&status=active", "status=active", `q=menu&workspace_id=${other.id}`]) {
        const res = await api("GET", `/qr-codes?${filters}&limit=1&cursor=${cursor}`, { key });
        expectError(res, 400, "validation_error");
        expect(invalidFields(res), filters).toEqual(["cursor"]);
      }

      for (const [query, field] of [
        [`q=${"a".repeat(201)}`, "q"],
        ["q=a%00b", "q"],
        ["q=a&q=b", "q"],
        ["status=deleted", "status"],
        ["status=ACTIVE", "status"],
      ]) {
        for (const path of ["/qr-codes", `/workspaces/${workspaceId}/qr-codes`]) {
          const res = await api("GET", `${path}?${query}`, { key });
          expectError(res, 400, "validation_error");
          expect(invalidFields(res), `${path}?${query}`).toEqual([field]);
        }
      }
      // The catalog checks the search itself, for every caller of its list.
      for (const nameContains of ["a".repeat(201), "a\u0000b"]) {
        const refused = await stack.catalog.listQrCodes({ accountId, nameContains }).catch((error: unknown) => error);
        expect(errorInfoOf(refused as ConnectError)?.fieldViolations.map((v) => v.field)).toEqual(["name_contains"]);
      }
    });

    it("requires the premium frames add-on for circle frames and labels", async () => {
      const { accountId, key, workspaceId } = await accountWithWorkspace();
      const circle = { design: { frame: { enabled: true, type: "circle" } } };
      const labelled = { design: { frame: { enabled: true, type: "square", labelBottom: "Scan me" } } };
      const needsAddon = (field: string) => ({
        field,
        reason: "addon_required",
        message: "needs the premium_frames add-on",
      });
      const refusedCircle = await createCode(key, workspaceId, circle);
      expectError(refusedCircle, 403, "premium_frames_required");
      expect(refusedCircle.body.error.details).toEqual({ fields: [needsAddon("design.frame.type")] });
      const refusedLabels = await createCode(key, workspaceId, {
        design: { frame: { enabled: true, type: "circle", labelTop: "Menu", labelBottom: "Scan me" } },
      });
      expect(refusedLabels.body.error.details).toEqual({
        fields: [
          needsAddon("design.frame.type"),
          needsAddon("design.frame.labelTop"),
          needsAddon("design.frame.labelBottom"),
        ],
      });
      expectError(await createCode(key, workspaceId, labelled), 403, "premium_frames_required");
      expect(
        (await createCode(key, workspaceId, { design: { frame: { enabled: true, type: "rounded" } } })).status,
      ).toBe(201);

      await stack.admin.updateAccount({ accountId, addAddons: [Addon.PREMIUM_FRAMES] });
      const premium = await createCode(key, workspaceId, labelled);
      expect(premium.status).toBe(201);
      expect(premium.body.design.frame).toMatchObject({ enabled: true, type: "square", labelBottom: "Scan me" });
    });

    it("accepts qr-code-styling's corner names and reads back ours; unlike corner pairs stay refused", async () => {
      const { key, workspaceId } = await accountWithWorkspace();
      const cases: [Record<string, string>, Record<string, string>][] = [
        // qr-code-styling's names: its `extra-rounded` is our `rounded`, its `dot` our `circle`.
        [
          { cornerSquareShape: "dot", cornerDotShape: "dot" },
          { cornerSquareShape: "circle", cornerDotShape: "circle" },
        ],
        [
          { cornerSquareShape: "extra-rounded", cornerDotShape: "extra-rounded" },
          { cornerSquareShape: "rounded", cornerDotShape: "rounded" },
        ],
        [
          { cornerSquareShape: "extra-rounded", cornerDotShape: "rounded" },
          { cornerSquareShape: "rounded", cornerDotShape: "rounded" },
        ],
        [
          { cornerSquareShape: "circle", cornerDotShape: "dot" },
          { cornerSquareShape: "circle", cornerDotShape: "circle" },
        ],
        [{ cornerSquareShape: "dot" }, { cornerSquareShape: "circle", cornerDotShape: "circle" }],
      ];
      for (const [given, stored] of cases) {
        const created = await createCode(key, workspaceId, { design: given });
        expect(created.status, JSON.stringify(given)).toBe(201);
        expect(created.body.design).toMatchObject(stored);
        expect((await api("GET", `/qr-codes/${created.body.id}`, { key })).body.design).toMatchObject(stored);
      }
      // Decoders misread every unlike pair somewhere (the scannability matrix), whatever it is called.
      for (const design of [
        { cornerSquareShape: "extra-rounded", cornerDotShape: "dot" },
        { cornerSquareShape: "dot", cornerDotShape: "square" },
      ]) {
        const refused = await createCode(key, workspaceId, { design });
        expectError(refused, 400, "validation_error");
        expect(refused.body.error.details.fields).toEqual([
          expect.objectContaining({
            field: "design.cornerDotShape",
            reason: "mismatched_corner_shapes",
            message: expect.stringContaining("must be"),
          }),
        ]);
      }
      // qr-code-styling's module-drawn corner names have no shape of ours; names are exact.
      for (const design of [
        { cornerSquareShape: "classy" },
        { cornerDotShape: "dots" },
        { cornerSquareShape: "DOT" },
      ]) {
        const refused = await createCode(key, workspaceId, { design });
        expectError(refused, 400, "validation_error");
        expect(invalidFields(refused)).toEqual([`design.${Object.keys(design)[0]}`]);
      }
      expect((await api("GET", "/qr-codes", { key })).body.data).toHaveLength(cases.length);
    });

    it("lists, pages and filters codes by workspace, hiding other accounts' workspaces", async () => {
      const { key, workspaceId } = await accountWithWorkspace();
      const { body: other } = await api("POST", "/workspaces", { key, body: { name: "Other" } });
      for (const name of ["a", "b", "c"]) await createCode(key, workspaceId, { name });
      await createCode(key, other.id, { name: "d" });

      const names = (res: { body: { data: { name: string }[] } }) => res.body.data.map((c) => c.name);
      expect(names(await api("GET", "/qr-codes", { key }))).toEqual(["a", "b", "c", "d"]);
      expect(names(await api("GET", `/qr-codes?workspace_id=${workspaceId}`, { key }))).toEqual(["a", "b", "c"]);
      const first = await api("GET", `/workspaces/${workspaceId}/qr-codes?limit=2`, { key });
      expect(names(first)).toEqual(["a", "b"]);
      const second = await api(
        "GET",
        `/workspaces/${workspaceId}/qr-codes?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`,
        { key },
      );
      expect(names(second)).toEqual(["c"]);
      expect(second.body.next_cursor).toBeNull();
      // A cursor of one list is refused by another.
      const crossed = await api("GET", `/qr-codes?cursor=${encodeURIComponent(first.body.next_cursor)}`, { key });
      expect(invalidFields(crossed)).toEqual(["cursor"]);
      expect(invalidFields(await api("GET", `/workspaces/${workspaceId}/qr-codes?limit=101`, { key }))).toEqual([
        "limit",
      ]);

      const stranger = await accountWithWorkspace();
      expectError(await api("GET", `/workspaces/${workspaceId}/qr-codes`, { key: stranger.key }), 404, "not_found");
      expectError(await api("GET", `/qr-codes?workspace_id=${workspaceId}`, { key: stranger.key }), 404, "not_found");
      expect(invalidFields(await api("GET", "/qr-codes?workspace_id=nope", { key }))).toEqual(["workspace_id"]);
      expect((await api("GET", "/qr-codes", { key: stranger.key })).body.data).toEqual([]);
    });

    it("renames, re-points, pauses, tags and moves a code; creation-only and read-only fields are refused", async () => {
      const { key, workspaceId } = await accountWithWorkspace();
      const { body: second } = await api("POST", "/workspaces", { key, body: { name: "Second" } });
      const { body: code } = await createCode(key, workspaceId, { utm: { medium: "print" } });

      const updated = await api("PATCH", `/qr-codes/${code.id}`, {
        key,
        body: { name: "Renamed", destination_url: "https://example.org/new", tags: ["a"], workspace_id: second.id },
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({
        name: "Renamed",
        destination_url: "https://example.org/new",
        tags: ["a"],
        workspace_id: second.id,
      });
      expect(updated.body.vanity_url).toBe(code.vanity_url);
      expect((await scan(code.vanity_url)).headers.get("location")).toBe("https://example.org/new?utm_medium=print");
      expect((await api("GET", `/workspaces/${workspaceId}`, { key })).body.qr_code_count).toBe(0);
      expect((await api("GET", `/workspaces/${second.id}`, { key })).body.qr_code_count).toBe(1);

      const paused = await api("PATCH", `/qr-codes/${code.id}`, { key, body: { status: "paused" } });
      expect(paused.body.status).toBe("paused");
      const pausedScan = await scan(code.vanity_url);
      expect(pausedScan.status).toBe(404);
      expect(pausedScan.headers.get("cache-control")).toBe("no-store");
      await api("PATCH", `/qr-codes/${code.id}`, { key, body: { status: "active" } });
      expect((await scan(code.vanity_url)).status).toBe(302);

      const unfiled = await api("PATCH", `/qr-codes/${code.id}`, { key, body: { workspace_id: null } });
      expect(unfiled.body.workspace_id).toBeNull();

      const refused = await api("PATCH", `/qr-codes/${code.id}`, {
        key,
        body: {
          design: { style: "dots" },
          utm: {},
          total_scans: 9,
          vanity_url: "https://evil.example/",
          account_id: code.id,
        },
      });
      expectError(refused, 400, "validation_error");
      expect(refused.body.error.details.fields).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ field: "design", reason: "creation_only" }),
          expect.objectContaining({ field: "utm", reason: "creation_only" }),
          expect.objectContaining({ field: "total_scans", reason: "read_only" }),
          expect.objectContaining({ field: "vanity_url", reason: "read_only" }),
          expect.objectContaining({ field: "account_id", reason: "read_only" }),
        ]),
      );
      expect(invalidFields(await api("PATCH", `/qr-codes/${code.id}`, { key, body: { status: "deleted" } }))).toEqual([
        "status",
      ]);
      expect(
        invalidFields(await api("PATCH", `/qr-codes/${code.id}`, { key, body: { destination_url: "ftp://x" } })),
      ).toEqual(["destination_url"]);
      expect((await api("GET", `/qr-codes/${code.id}`, { key })).body).toMatchObject({
        destination_url: "https://example.org/new",
        status: "active",
      });
    });

    it("keeps codes inside their account: foreign reads, changes, moves and deletes are 404 and change nothing", async () => {
      const owner = await accountWithWorkspace();
      const stranger = await accountWithWorkspace();
      const { body: code } = await createCode(owner.key, owner.workspaceId, {});

      expectError(await api("GET", `/qr-codes/${code.id}`, { key: stranger.key }), 404, "not_found");
      expectError(
        await api("PATCH", `/qr-codes/${code.id}`, { key: stranger.key, body: { name: "Mine" } }),
        404,
        "not_found",
      );
      expectError(await api("DELETE", `/qr-codes/${code.id}`, { key: stranger.key }), 404, "not_found");
      const intoForeign = await api("PATCH", `/qr-codes/${code.id}`, {
        key: owner.key,
        body: { workspace_id: stranger.workspaceId, name: "Moved" },
      });
      expectError(intoForeign, 404, "not_found");
      expect(intoForeign.body.error.details).toMatchObject({ resource: "workspace" });
      expectError(await createCode(stranger.key, owner.workspaceId, {}), 404, "not_found");

      expect((await api("GET", `/qr-codes/${code.id}`, { key: owner.key })).body).toEqual(code);
      expect((await scan(code.vanity_url)).status).toBe(302);
    });

    it("deletes a code: 200 with a body, then 404, the link stops, and the capacity is free", async () => {
      const { accountId, key, workspaceId } = await accountWithWorkspace();
      const { body: code } = await createCode(key, workspaceId, {});
      const deleted = await api("DELETE", `/qr-codes/${code.id}`, { key });
      expect(deleted).toMatchObject({ status: 200, body: { id: code.id, deleted: true } });
      expectError(await api("GET", `/qr-codes/${code.id}`, { key }), 404, "not_found");
      expectError(await api("DELETE", `/qr-codes/${code.id}`, { key }), 404, "not_found");
      const gone = await scan(code.vanity_url);
      expect(gone.status).toBe(404);
      const unknown = await scan(code.vanity_url.replace(/[^/]{8}$/, "zzzzzzzz"));
      expect(await gone.text()).toBe(await unknown.text());
      const { capacity } = await stack.catalog.getCapacity({ accountId });
      expect(capacity?.qrCodesUsed).toBe(0n);
    });

    it("gives vanity links on a custom domain verified through DNS, with the contract's slug rules", async () => {
      const { accountId, key, workspaceId } = await accountWithWorkspace();
      const hostname = `qr-${randomBytes(4).toString("hex")}.acme.example`;
      const { domain } = await stack.domains.createDomain({ accountId, hostname });

      const listed = await api("GET", "/domains", { key });
      expect(listed.body.data).toEqual([
        expect.objectContaining({
          id: domain!.id,
          hostname,
          status: "pending",
          verification: {
            type: "TXT",
            name: `_qr-platform-challenge.${hostname}`,
            value: domain!.challengeRecordValue,
          },
          // Nothing has checked how the cluster serves it yet.
          serving: null,
        }),
      ]);
      const vanity = { vanity_domain_id: domain!.id, vanity_slug: "Menu" };
      expectError(await createCode(key, workspaceId, vanity), 409, "domain_not_verified");

      stack.dns.setTxt(domain!.challengeRecordName, domain!.challengeRecordValue);
      await stack.domains.verifyDomain({ accountId, domainId: domain!.id });
      expect((await api("GET", "/domains", { key })).body.data[0]).toMatchObject({
        status: "verified",
        failure_reason: null,
        serving: null,
      });

      // The domain operator reports how the cluster serves it: first why not, then that it does.
      const issuing = {
        serving: false,
        routeAdmitted: true,
        certificateReady: false,
        reason: "Issuing",
        message: "Waiting for the ACME HTTP-01 challenge.",
      };
      const reported = (await stack.domains.reportDomainServing({ domainId: domain!.id, serving: issuing })).domain!
        .serving!;
      expect((await api("GET", "/domains", { key })).body.data[0].serving).toEqual({
        status: "not_serving",
        reason: "Issuing",
        message: "Waiting for the ACME HTTP-01 challenge.",
        route_admitted: true,
        certificate_ready: false,
        certificate_expires_at: null,
        reported_at: new Date(
          Number(reported.reportTime!.seconds) * 1000 + reported.reportTime!.nanos / 1e6,
        ).toISOString(),
      });
      const expires = Date.parse("2027-06-01T08:30:00.000Z");
      await stack.domains.reportDomainServing({
        domainId: domain!.id,
        serving: {
          serving: true,
          routeAdmitted: true,
          certificateReady: true,
          certificateExpireTime: timestampFromMs(expires),
          reason: "Serving",
        },
      });
      expect((await api("GET", "/domains", { key })).body.data[0].serving).toMatchObject({
        status: "serving",
        reason: "Serving",
        message: null,
        route_admitted: true,
        certificate_ready: true,
        certificate_expires_at: "2027-06-01T08:30:00.000Z",
      });

      const created = await createCode(key, workspaceId, { ...vanity, utm: { source: "door" } });
      expect(created.status).toBe(201);
      expect(created.body.vanity_url).toBe(`http://${hostname}/menu`);
      expect(created.body.canonical_url).not.toBe(created.body.vanity_url);

      // The redirector picks the link by the Host header, as it would behind the custom domain's DNS.
      const viaDomain = await new Promise<{ status: number; location?: string }>((done, fail) => {
        const target = new URL(stack.redirectorUrl);
        http
          .get({ host: target.hostname, port: target.port, path: "/MENU", headers: { host: hostname } }, (res) => {
            res.resume();
            done({ status: res.statusCode!, location: res.headers.location });
          })
          .on("error", fail);
      });
      expect(viaDomain).toEqual({ status: 302, location: "https://example.com/menu?utm_source=door" });

      expectError(await createCode(key, workspaceId, { ...vanity, vanity_slug: "menu" }), 409, "slug_taken");
      expect(invalidFields(await createCode(key, workspaceId, { ...vanity, vanity_slug: "api" }))).toEqual([
        "vanity_slug",
      ]);
      expect(invalidFields(await createCode(key, workspaceId, { vanity_domain_id: domain!.id }))).toEqual([
        "vanity_slug",
      ]);
      const stranger = await accountWithWorkspace();
      const foreign = await createCode(stranger.key, stranger.workspaceId, { ...vanity, vanity_slug: "theirs" });
      expectError(foreign, 404, "not_found");
      expect(foreign.body.error.details).toMatchObject({ resource: "domain" });
      expect((await api("GET", "/domains", { key: stranger.key })).body.data).toEqual([]);
    });

    it("walks a new user's journey through the typed client generated from the OpenAPI document", async () => {
      const { key } = await newAccount();
      const client = typedClient(stack.baseUrl, key);
      const workspace = await client.POST("/workspaces", { body: { name: "Launch" } });
      expect(workspace.response.status).toBe(201);
      const workspaceId = workspace.data!.id;
      const created = await client.POST("/workspaces/{workspace_id}/qr-codes", {
        params: { path: { workspace_id: workspaceId } },
        body: { name: "Flyer", destination_url: "https://example.com/launch", utm: { medium: "flyer" } },
      });
      expect(created.response.status).toBe(201);
      const code = created.data!;
      expect((await fetch(code.vanity_url, { redirect: "manual" })).headers.get("location")).toBe(
        "https://example.com/launch?utm_medium=flyer",
      );

      const page = await client.GET("/qr-codes", { params: { query: { workspace_id: workspaceId, limit: 1 } } });
      expect(page.data).toEqual({ data: [expect.objectContaining({ id: code.id })], next_cursor: null });
      const renamed = await client.PATCH("/qr-codes/{id}", {
        params: { path: { id: code.id } },
        body: { name: "Flyer v2", workspace_id: null },
      });
      expect(renamed.data).toMatchObject({ name: "Flyer v2", workspace_id: null });
      const deleted = await client.DELETE("/qr-codes/{id}", { params: { path: { id: code.id } } });
      expect(deleted.data).toEqual({ id: code.id, deleted: true });
      const missing = await client.GET("/qr-codes/{id}", { params: { path: { id: code.id } } });
      expect(missing.response.status).toBe(404);
      expect(missing.error?.error.code).toBe("not_found");
    });

    it("refuses destinations that are short links of this platform, which would chain or loop", async () => {
      const { accountId, key, workspaceId } = await accountWithWorkspace();
      const { body: code } = await createCode(key, workspaceId, {});
      const onShortDomain = await createCode(key, workspaceId, { destination_url: code.vanity_url });
      expectError(onShortDomain, 400, "validation_error");
      expect(onShortDomain.body.error.details.fields).toEqual([
        expect.objectContaining({ field: "destination_url", reason: "short_link_destination" }),
      ]);
      const selfLoop = await api("PATCH", `/qr-codes/${code.id}`, {
        key,
        body: { destination_url: `${code.vanity_url}?again=1` },
      });
      expect(selfLoop.body.error.details.fields).toEqual([
        expect.objectContaining({ field: "destination_url", reason: "short_link_destination" }),
      ]);

      // The short domain is a loopback address in both shapes: every spelling of it, and of loopback, is ours.
      const short = new URL(code.vanity_url);
      const path = `${short.pathname}?via=spelling`;
      for (const destination of [
        `${short.protocol}//${short.hostname}.:${short.port}${path}`,
        `${short.protocol}//localhost:${short.port}${path}`,
        `${short.protocol}//LOCALHOST.:${short.port}${path}`,
        `${short.protocol}//[::1]:${short.port}${path}`,
      ]) {
        const spelled = await createCode(key, workspaceId, { destination_url: destination });
        expect(spelled.body.error?.details?.fields, destination).toEqual([
          expect.objectContaining({ field: "destination_url", reason: "short_link_destination" }),
        ]);
        const patched = await api("PATCH", `/qr-codes/${code.id}`, { key, body: { destination_url: destination } });
        expect(patched.body.error?.details?.fields, destination).toEqual([
          expect.objectContaining({ field: "destination_url", reason: "short_link_destination" }),
        ]);
      }
      // Another port of a loopback name is another program of the machine (a developer's own app).
      const otherPort = short.port === "3000" ? "3001" : "3000";
      const elsewhere = await createCode(key, workspaceId, { destination_url: `http://localhost:${otherPort}/x` });
      expect(elsewhere.status).toBe(201);
      expect(elsewhere.body.destination_url).toBe(`http://localhost:${otherPort}/x`);

      const hostname = `loop-${randomBytes(4).toString("hex")}.example`;
      await stack.domains.createDomain({ accountId, hostname });
      const onCustomDomain = await createCode(key, workspaceId, { destination_url: `https://${hostname}/anything` });
      expect(invalidFields(onCustomDomain)).toEqual(["destination_url"]);
      const trailingDot = await createCode(key, workspaceId, {
        destination_url: `https://${hostname.toUpperCase()}./anything`,
      });
      expect(trailingDot.body.error.details.fields).toEqual([
        expect.objectContaining({ field: "destination_url", reason: "short_link_destination" }),
      ]);
      expect((await createCode(key, workspaceId, { destination_url: `https://not-${hostname}/anything` })).status).toBe(
        201,
      );
      expect((await api("GET", `/qr-codes/${code.id}`, { key })).body.destination_url).toBe("https://example.com/menu");
    });

    it("enforces the plan's capacity at account level and frees it on delete", async () => {
      const { key, workspaceId } = await accountWithWorkspace();
      const { body: other } = await api("POST", "/workspaces", { key, body: { name: "Other" } });
      const codes: string[] = [];
      for (let i = 0; i < 100; i++) {
        const res = await createCode(key, i % 2 ? workspaceId : other.id, { name: `c${i}` });
        expect(res.status).toBe(201);
        codes.push(res.body.id);
      }
      const refused = await createCode(key, workspaceId, { name: "one too many" });
      expectError(refused, 403, "qr_code_limit_reached");
      expect(refused.body.error.details).toEqual({ limit: 100, used: 100 });
      // The account reports the same use across its workspaces.
      expect((await api("GET", "/account", { key })).body).toMatchObject({
        limits: { qr_codes: 100 },
        usage: { qr_codes: 100 },
      });
      await api("DELETE", `/qr-codes/${codes[0]}`, { key });
      expect((await api("GET", "/account", { key })).body.usage).toEqual({ qr_codes: 99 });
      expect((await createCode(key, workspaceId, { name: "fits again" })).status).toBe(201);
    });
  });

  describe(`[${mode}] image export`, () => {
    async function newCode(design: Record<string, unknown> = {}) {
      const account = await newAccount();
      const { body: workspace } = await api("POST", "/workspaces", { key: account.key, body: { name: "Print" } });
      const created = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
        key: account.key,
        body: { name: "Spring Menü – Café", destination_url: "https://example.com/menu", design },
      });
      expect(created.status).toBe(201);
      return { ...account, code: created.body };
    }

    it("exports a styled JPEG that zbarimg reads as the vanity_url, with the documented headers", async () => {
      const { key, code } = await newCode({
        foreground: "#1a237e",
        style: "rounded",
        cornerSquareShape: "rounded",
        cornerDotShape: "rounded",
      });
      const res = await api("GET", `/qr-codes/${code.id}/export?format=jpg&size=512`, { key });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/jpeg");
      expect(res.headers.get("content-disposition")).toBe('attachment; filename="spring-menu-cafe-512.jpg"');
      expect(res.headers.get("cache-control")).toBe("private, no-cache");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(await sharp(res.body).metadata()).toMatchObject({ format: "jpeg", width: 512, height: 512 });
      expect(await zbarDecode([res.body], "jpg")).toEqual([code.vanity_url]);
    });

    it("serves qr_image_url as a 1024 px PNG, and SVG that another renderer rasterizes to the same link", async () => {
      const { key, code } = await newCode();
      const png = await call(code.qr_image_url, "GET", "", { key });
      expect(png.status).toBe(200);
      expect(png.headers.get("content-type")).toBe("image/png");
      expect(await sharp(png.body).metadata()).toMatchObject({ width: 1024, height: 1024 });
      expect(await jsqrDecode(png.body)).toBe(code.vanity_url);

      const svg = await api("GET", `/qr-codes/${code.id}/export?format=svg&size=300`, { key });
      expect(svg.headers.get("content-type")).toBe("image/svg+xml");
      expect(svg.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(await zbarDecode([await rsvgToPng(svg.body)], "png")).toEqual([code.vanity_url]);
    });

    it("answers If-None-Match with 304 and no body; another size is another ETag", async () => {
      const { key, code } = await newCode();
      const first = await api("GET", `/qr-codes/${code.id}/export?size=256`, { key });
      const etag = first.headers.get("etag")!;
      const rendersBefore = stack.renderCount?.();
      const again = await api("GET", `/qr-codes/${code.id}/export?size=256`, {
        key,
        headers: { "if-none-match": etag },
      });
      expect(again.status).toBe(304);
      expect(again.body).toBe("");
      expect(again.headers.get("etag")).toBe(etag);
      if (rendersBefore !== undefined) expect(stack.renderCount?.()).toBe(rendersBefore);
      const other = await api("GET", `/qr-codes/${code.id}/export?size=257`, {
        key,
        headers: { "if-none-match": etag },
      });
      expect(other.status).toBe(200);
      expect(other.headers.get("etag")).not.toBe(etag);
    });

    it("answers a repeated export without rendering it again, and another design with its own image", async () => {
      const { key, code } = await newCode();
      const first = await api("GET", `/qr-codes/${code.id}/export?size=300`, { key });
      const rendersBefore = stack.renderCount?.();
      const again = await api("GET", `/qr-codes/${code.id}/export?size=300`, { key });
      expect(again.status).toBe(200);
      expect(Buffer.compare(again.body, first.body)).toBe(0);
      if (rendersBefore !== undefined) expect(stack.renderCount?.()).toBe(rendersBefore);

      // A design is fixed at creation, so another look is another code: its image is drawn, never the first one's.
      const { body: red } = await api("POST", `/workspaces/${code.workspace_id}/qr-codes`, {
        key,
        body: { name: code.name, destination_url: "https://example.com/menu", design: { foreground: "#b71c1c" } },
      });
      const other = await api("GET", `/qr-codes/${red.id}/export?size=300`, { key });
      expect(other.status).toBe(200);
      expect(Buffer.compare(other.body, first.body)).not.toBe(0);
      expect(await jsqrDecode(other.body)).toBe(red.vanity_url);
      if (rendersBefore !== undefined) expect(stack.renderCount?.()).toBe(rendersBefore + 1);
    });

    it("refuses a bad format or size with 400 before rendering anything", async () => {
      const { key, code } = await newCode();
      const rendersBefore = stack.renderCount?.();
      for (const [query, field] of [
        ["format=gif", "format"],
        ["format=PNG", "format"],
        ["size=127", "size"],
        ["size=4097", "size"],
        ["size=1.5", "size"],
        ["size=abc", "size"],
        ["size=", "size"],
        ["size=512&size=256", "size"],
      ]) {
        const res = await api("GET", `/qr-codes/${code.id}/export?${query}`, { key });
        expectError(res, 400, "validation_error");
        expect(invalidFields(res)).toEqual([field]);
      }
      if (rendersBefore !== undefined) expect(stack.renderCount?.()).toBe(rendersBefore);
    });

    it("keeps images inside their account", async () => {
      const { code } = await newCode();
      const stranger = await newAccount();
      expectError(await api("GET", `/qr-codes/${code.id}/export`, { key: stranger.key }), 404, "not_found");
      expectError(await api("GET", `/qr-codes/${randomUUID()}/export`, { key: stranger.key }), 404, "not_found");
      expectError(await api("GET", `/qr-codes/not-a-uuid/export`, { key: stranger.key }), 400, "validation_error");
      expectError(await api("GET", `/qr-codes/${code.id}/export`), 401, "missing_api_key");
    });

    it("refuses a logo URL that leads into our own network, without fetching it", async () => {
      let canaryHits = 0;
      const serveLogo: http.RequestListener = (_req, res) => {
        canaryHits++;
        res.writeHead(200, { "content-type": "image/png" }).end(Buffer.from(TINY_PNG.split(",")[1]!, "base64"));
      };
      const canary = http.createServer(serveLogo);
      await new Promise<void>((done) => canary.listen(0, "127.0.0.2", done));
      const { port } = canary.address() as { port: number };
      // The same canary on loopback proper, so every URL below names a live server.
      const loopbackCanary = http.createServer(serveLogo);
      await new Promise<void>((done) => loopbackCanary.listen(0, "127.0.0.1", done));
      const loopbackPort = (loopbackCanary.address() as { port: number }).port;
      try {
        const { key } = await newAccount();
        const { body: workspace } = await api("POST", "/workspaces", { key, body: { name: "Print" } });
        for (const url of [
          `http://127.0.0.2:${port}/logo.png`,
          `http://127.0.0.1:${loopbackPort}/logo.png`,
          `http://localhost:${loopbackPort}/logo.png`,
          `http://[::1]:${loopbackPort}/logo.png`,
          "http://169.254.169.254/latest/meta-data",
        ]) {
          const res = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
            key,
            body: { name: "x", destination_url: "https://example.com", design: { logo: { url } } },
          });
          expectError(res, 400, "validation_error");
          expect(res.body.error.details.fields).toEqual([
            expect.objectContaining({ field: "design.logo.url", reason: "forbidden_address" }),
          ]);
          expect(JSON.stringify(res.body)).not.toContain("127.0.0.2:");
        }
        const both = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
          key,
          body: {
            name: "x",
            destination_url: "https://example.com",
            design: { logo: { url: "https://example.com/a.png", dataUri: TINY_PNG } },
          },
        });
        expect(invalidFields(both)).toEqual(["design.logo.dataUri"]);
        expect(canaryHits).toBe(0);
        expect((await api("GET", "/qr-codes", { key })).body.data).toEqual([]);
      } finally {
        await new Promise((done) => canary.close(done));
        await new Promise((done) => loopbackCanary.close(done));
      }
    });

    it("refuses a logo by the pixels it decodes to, however small its file, and creates nothing", async () => {
      const { key } = await newAccount();
      const { body: workspace } = await api("POST", "/workspaces", { key, body: { name: "Print" } });
      // 16000x16000 decodes to 1 GiB of RGBA; its file fits the test edge's 64 KiB body limit.
      const bomb = await hugeBlankPng(16000, 16000);
      expect(bomb.length).toBeLessThan(40 * 1024);
      const refused = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
        key,
        body: {
          name: "x",
          destination_url: "https://example.com",
          design: { logo: { dataUri: `data:image/png;base64,${bomb.toString("base64")}` } },
        },
      });
      expectError(refused, 400, "validation_error");
      expect(refused.body.error.details.fields).toEqual([
        expect.objectContaining({
          field: "design.logo.dataUri",
          reason: "logo_too_many_pixels",
          message: expect.stringContaining("16000x16000"),
        }),
      ]);
      expect((await api("GET", "/qr-codes", { key })).body.data).toEqual([]);
    });

    it("refuses designs that would not scan, and creates nothing", async () => {
      const { key } = await newAccount();
      const { body: workspace } = await api("POST", "/workspaces", { key, body: { name: "Print" } });
      const attempt = (design: Record<string, unknown>) =>
        api("POST", `/workspaces/${workspace.id}/qr-codes`, {
          key,
          body: { name: "x", destination_url: "https://example.com", design },
        });
      const lowContrast = await attempt({ foreground: "#aaaaaa" });
      expectError(lowContrast, 400, "validation_error");
      expect(lowContrast.body.error.details.fields).toEqual([
        expect.objectContaining({ field: "design.foreground", reason: "low_contrast" }),
      ]);
      const inverted = await attempt({ foreground: "#ffffff", background: "#000000" });
      expect(inverted.body.error.details.fields).toEqual([
        expect.objectContaining({ field: "design.foreground", reason: "inverted_colors" }),
      ]);
      const logo = await attempt({ errorCorrection: "L", logo: { dataUri: TINY_PNG, scale: 0.2 } });
      expectError(logo, 400, "validation_error");
      expect(logo.body.error.details.fields).toEqual([
        expect.objectContaining({ field: "design.logo.scale", reason: "logo_too_large" }),
      ]);
      expect((await api("GET", "/qr-codes", { key })).body.data).toEqual([]);
      expect((await attempt({ logo: { dataUri: TINY_PNG, scale: 0.2 } })).status).toBe(201);
    });
  });

  describe(`[${mode}] design preview`, () => {
    const preview = (key: string, body: Record<string, unknown>) => api("POST", "/qr-codes/preview", { key, body });
    it("draws a design as the export of a code with it would, with a link of a real one's length, storing nothing", async () => {
      const { key } = await newAccount();
      const design = { foreground: "#1a237e", style: "dots", cornerSquareShape: "rounded", cornerDotShape: "rounded" };
      const drawn = await preview(key, { design, size: 512 });
      expect(drawn.status).toBe(200);
      expect(drawn.headers.get("content-type")).toBe("image/png");
      expect(drawn.headers.get("cache-control")).toBe("no-store");
      expect(drawn.headers.get("x-content-type-options")).toBe("nosniff");
      expect((await sharp(drawn.body).metadata()).width).toBe(512);
      // Nothing was made: no code, no link, no place of capacity.
      expect((await api("GET", "/qr-codes", { key })).body.data).toEqual([]);

      const { body: workspace } = await api("POST", "/workspaces", { key, body: { name: "Print" } });
      const { body: code } = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
        key,
        body: { name: "Menu", destination_url: "https://example.com/menu", design },
      });
      const exported = await api("GET", `/qr-codes/${code.id}/export?size=512`, { key });
      const previewed = await jsqrSymbol(drawn.body);
      expect(previewed?.text).toBe(`${new URL(code.vanity_url).origin}/preview2`);
      expect(previewed?.text).toHaveLength(code.vanity_url.length);
      expect(previewed?.version).toBe((await jsqrSymbol(exported.body))?.version);

      const svg = await preview(key, { design, format: "svg", size: 300, content: "https://example.com/x" });
      expect(svg.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
      expect(svg.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(await zbarDecode([await rsvgToPng(svg.body)], "png")).toEqual(["https://example.com/x"]);
      const jpg = await preview(key, { format: "jpg" });
      expect(jpg.headers.get("content-type")).toBe("image/jpeg");
      expect((await sharp(jpg.body).metadata()).width).toBe(1024);
    });

    it("refuses what the create refuses, with the same errors and field paths", async () => {
      const { accountId, key } = await newAccount();
      const mismatched = await preview(key, { design: { cornerSquareShape: "circle", cornerDotShape: "square" } });
      expectError(mismatched, 400, "validation_error");
      expect(mismatched.body.error.details.fields).toEqual([
        expect.objectContaining({ field: "design.cornerDotShape", reason: "mismatched_corner_shapes" }),
      ]);
      const lowContrast = await preview(key, { design: { foreground: "#aaaaaa" } });
      expect(lowContrast.body.error.details.fields).toEqual([
        expect.objectContaining({ field: "design.foreground", reason: "low_contrast" }),
      ]);
      const logo = await preview(key, { design: { errorCorrection: "L", logo: { dataUri: TINY_PNG, scale: 0.2 } } });
      expect(logo.body.error.details.fields).toEqual([
        expect.objectContaining({ field: "design.logo.scale", reason: "logo_too_large" }),
      ]);
      const labelled = { design: { frame: { enabled: true, type: "circle", labelTop: "Menu" } } };
      const premium = await preview(key, labelled);
      expectError(premium, 403, "premium_frames_required");
      expect(premium.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual([
        "design.frame.type",
        "design.frame.labelTop",
      ]);
      for (const [body, field] of [
        [{ format: "gif" }, "format"],
        [{ size: 127 }, "size"],
        [{ size: 1.5 }, "size"],
        [{ size: "512" }, "size"],
        [{ content: "" }, "content"],
        [{ content: "a\u0000b" }, "content"],
        [{ content: "x".repeat(3000) }, "content"],
        [{ colour: "red" }, "colour"],
      ] as const) {
        const res = await preview(key, body);
        expectError(res, 400, "validation_error");
        expect(invalidFields(res), JSON.stringify(body).slice(0, 40)).toEqual([field]);
      }
      expect((await api("GET", "/qr-codes", { key })).body.data).toEqual([]);

      await stack.admin.updateAccount({ accountId, addAddons: [Addon.PREMIUM_FRAMES] });
      expect((await preview(key, labelled)).status).toBe(200);
    });

    it("needs the scope of a create, and takes no Idempotency-Key", async () => {
      const viewer = await newAccount(SubscriptionTier.ORIGIN, ["qr_codes:read", "export:read"]);
      expectError(await preview(viewer.key, {}), 403, "insufficient_scope");
      expectError(await api("POST", "/qr-codes/preview", { body: {} }), 401, "missing_api_key");
      const { key } = await newAccount();
      const twice = { key, body: { size: 128 }, headers: { "Idempotency-Key": "preview-1" } };
      expect((await api("POST", "/qr-codes/preview", twice)).status).toBe(200);
      const again = await api("POST", "/qr-codes/preview", twice);
      expect(again.status).toBe(200);
      expect(again.headers.get("idempotent-replayed")).toBeNull();
      expect((await api("GET", "/qr-codes/preview", { key })).status).toBe(405);
    });
  });

  describe(`[${mode}] scans and analytics`, () => {
    const IPHONE =
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
    const WINDOWS_CHROME =
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";
    const ANDROID_CHROME =
      "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36";
    const BOTS = [
      "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
      "facebookexternalhit/1.1",
      "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    ];

    async function newCode() {
      const account = await newAccount();
      const { body: workspace } = await api("POST", "/workspaces", { key: account.key, body: { name: "Scans" } });
      const created = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
        key: account.key,
        body: { name: "Table card", destination_url: "https://example.com/menu" },
      });
      expect(created.status).toBe(201);
      return { ...account, code: created.body as { id: string; vanity_url: string } };
    }

    const follow = (url: string, method: string, headers: Record<string, string>) =>
      fetch(url, { method, redirect: "manual", headers });

    /** Asks for each query's analytics and expects 400 naming exactly that one field and reason. */
    async function expectAnalyticsRefusals(key: string, id: string, refusals: [string, string, string][]) {
      for (const [query, field, reason] of refusals) {
        const refused = await api("GET", `/qr-codes/${id}/analytics?${query}`, { key });
        expectError(refused, 400, "validation_error");
        const fields = refused.body.error.details.fields.map((f: { field: string; reason: string }) => ({
          field: f.field,
          reason: f.reason,
        }));
        expect(fields, query).toEqual([{ field, reason }]);
      }
    }

    const settledTotal = (key: string, id: string, expected: number) =>
      settledCount(async () => (await api("GET", `/qr-codes/${id}`, { key })).body.total_scans as number, expected);

    it("counts 100 follows exactly, not HEADs or bots, and breaks them down by the agents and referrers sent", async () => {
      const { key, code } = await newCode();
      const agents = [IPHONE, WINDOWS_CHROME, ANDROID_CHROME, IPHONE];
      for (let i = 0; i < 100; i++) {
        const headers: Record<string, string> = { "user-agent": agents[i % 4]! };
        if (i % 2 === 0) headers.referer = "https://news.example/spring-menu";
        expect((await follow(code.vanity_url, "GET", headers)).status).toBe(302);
      }
      for (let i = 0; i < 5; i++)
        expect((await follow(code.vanity_url, "HEAD", { "user-agent": IPHONE })).status).toBe(302);
      for (const bot of BOTS) expect((await follow(code.vanity_url, "GET", { "user-agent": bot })).status).toBe(302);

      expect(await settledTotal(key, code.id, 100)).toBe(100);
      const listed = await api("GET", "/qr-codes", { key });
      expect(listed.body.data.find((c: { id: string }) => c.id === code.id).total_scans).toBe(100);

      const { status, body } = await api("GET", `/qr-codes/${code.id}/analytics`, { key });
      expect(status).toBe(200);
      const today = new Date().toISOString().slice(0, 10);
      expect(body).toMatchObject({ qr_code_id: code.id, to: today, total_scans: 100 });
      // Every request came from 127.0.0.1: one visitor per user agent.
      expect(body.unique_scans).toBe(3);
      expect(body.daily).toHaveLength(30);
      expect(body.daily.at(-1)).toEqual({ date: today, scans: 100, unique_scans: 3 });
      expect(body.daily.slice(0, -1).every((day: { scans: number }) => day.scans === 0)).toBe(true);
      expect(body.devices).toEqual([
        { value: "mobile", scans: 75 },
        { value: "desktop", scans: 25 },
      ]);
      expect(body.operating_systems).toEqual([
        { value: "iOS", scans: 50 },
        { value: "Android", scans: 25 },
        { value: "Windows", scans: 25 },
      ]);
      // ua-parser names Chrome on Android "Chrome" too.
      expect(body.browsers).toEqual([
        { value: "Chrome", scans: 50 },
        { value: "Mobile Safari", scans: 50 },
      ]);
      expect(body.referrers).toEqual([
        { value: "direct", scans: 50 },
        { value: "news.example", scans: 50 },
      ]);
      // Loopback has no country.
      expect(body.countries).toEqual([{ value: "unknown", scans: 100 }]);
    });

    it("does not count scans of a paused code, and counts again once it is resumed", async () => {
      const { key, code } = await newCode();
      expect((await follow(code.vanity_url, "GET", { "user-agent": IPHONE })).status).toBe(302);
      await api("PATCH", `/qr-codes/${code.id}`, { key, body: { status: "paused" } });
      expect((await follow(code.vanity_url, "GET", { "user-agent": IPHONE })).status).toBe(404);
      await api("PATCH", `/qr-codes/${code.id}`, { key, body: { status: "active" } });
      expect((await follow(code.vanity_url, "GET", { "user-agent": IPHONE })).status).toBe(302);
      expect(await settledTotal(key, code.id, 2)).toBe(2);
    });

    it("takes a range of days, and refuses bad and inverted ranges in the envelope", async () => {
      const { key, code } = await newCode();
      const range = await api("GET", `/qr-codes/${code.id}/analytics?from=2024-02-27&to=2024-03-01`, { key });
      expect(range.status).toBe(200);
      expect(range.body).toMatchObject({
        from: "2024-02-27",
        to: "2024-03-01",
        total_scans: 0,
        unique_scans: 0,
        countries: [],
        referrers: [],
      });
      expect(range.body.daily.map((day: { date: string }) => day.date)).toEqual([
        "2024-02-27",
        "2024-02-28",
        "2024-02-29",
        "2024-03-01",
      ]);
      const edges = await api("GET", `/qr-codes/${code.id}/analytics?from=2000-01-01&to=2000-01-01`, { key });
      expect(edges.status).toBe(200);
      expect(
        (await api("GET", `/qr-codes/${code.id}/analytics?from=9999-12-31&to=9999-12-31`, { key })).body.daily,
      ).toEqual([{ date: "9999-12-31", scans: 0, unique_scans: 0 }]);

      const refusals: [string, string, string][] = [
        ["from=2026-02-30", "from", "invalid_date"],
        ["to=yesterday", "to", "invalid_date"],
        ["from=", "from", "too_small"],
        ["from=2026-03-02&to=2026-03-01", "from", "invalid_range"],
        ["from=2024-01-01&to=2025-12-31", "from", "range_too_long"],
        ["from=2026-01-01&from=2026-01-02", "from", "invalid_type"],
        // Real dates, but outside the calendar the platform keeps scans for.
        ["from=0000-01-01&to=2026-01-02", "from", "out_of_range"],
        ["from=0000-01-01", "from", "out_of_range"],
        ["from=1999-12-31&to=2000-01-01", "from", "out_of_range"],
        ["to=-000001-01-01", "to", "invalid_date"],
      ];
      await expectAnalyticsRefusals(key, code.id, refusals);
    });

    it("adds UTC hour buckets on request, counting a redirect in its hour, and refuses what hours cannot cover", async () => {
      const { key, code } = await newCode();
      const before = Date.now();
      expect((await follow(code.vanity_url, "GET", { "user-agent": IPHONE })).status).toBe(302);
      const after = Date.now();
      expect(await settledTotal(key, code.id, 1)).toBe(1);
      // From the day of the first clock reading to that of the second: one day, or two across midnight.
      const [from, today] = [before, after].map((ms) => new Date(ms).toISOString().slice(0, 10));
      const query = `from=${from}&to=${today}&interval=hour`;
      const { status, body } = await api("GET", `/qr-codes/${code.id}/analytics?${query}`, { key });
      expect(status).toBe(200);
      expect(body).toMatchObject({
        interval: "hour",
        from,
        to: today,
        total_scans: 1,
        hourly_available_from: "2000-01-01",
      });
      expect(body.hourly).toHaveLength(from === today ? 24 : 48);
      expect(body.hourly[0].hour).toBe(`${from}T00:00:00Z`);
      const counted = body.hourly.filter((hour: { scans: number }) => hour.scans > 0);
      // The scan's hour is the redirect's, which lies between the two clock readings.
      const hours = new Set([before, after].map((ms) => `${new Date(ms).toISOString().slice(0, 13)}:00:00Z`));
      expect(counted).toHaveLength(1);
      expect(hours).toContain(counted[0].hour);
      expect(counted[0]).toMatchObject({ scans: 1, unique_scans: 1 });
      // Without the parameter the interval is `day`: the daily series and no `hourly`.
      const days = await api("GET", `/qr-codes/${code.id}/analytics?from=${today}`, { key });
      expect(days.body.interval).toBe("day");
      expect(days.body).not.toHaveProperty("hourly");

      const refusals: [string, string, string][] = [
        ["interval=week", "interval", "invalid_value"],
        ["interval=HOUR", "interval", "invalid_value"],
        ["interval=hour&interval=day", "interval", "invalid_value"],
        ["interval=hour&from=2026-01-01&to=2026-02-01", "from", "range_too_long"],
        ["interval=hour&from=2026-01-01&to=2025-12-31", "from", "invalid_range"],
      ];
      await expectAnalyticsRefusals(key, code.id, refusals);
      // A 31-day month of hours is within bounds.
      const month = await api("GET", `/qr-codes/${code.id}/analytics?interval=hour&from=2026-01-01&to=2026-01-31`, {
        key,
      });
      expect(month.body.hourly).toHaveLength(744);
      // Another account's code stays hidden with hours too.
      const stranger = await newAccount();
      expectError(
        await api("GET", `/qr-codes/${code.id}/analytics?interval=hour`, { key: stranger.key }),
        404,
        "not_found",
      );
    });

    it("needs analytics:read, and shows nothing of another account's code", async () => {
      const { code } = await newCode();
      const stranger = await newAccount();
      expectError(await api("GET", `/qr-codes/${code.id}/analytics`, { key: stranger.key }), 404, "not_found");
      const readOnly = await newAccount(SubscriptionTier.ORIGIN, ["qr_codes:read"]);
      expectError(await api("GET", `/qr-codes/${code.id}/analytics`, { key: readOnly.key }), 403, "insufficient_scope");
    });
  });

  describe(`[${mode}] browsers`, () => {
    const origin = "https://app.example";

    it("answers CORS preflights without a key, for any origin, and lets scripts read errors and quota headers", async () => {
      const preflight = await api("OPTIONS", "/qr-codes", {
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization,content-type",
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
      expect(preflight.headers.get("access-control-allow-headers")).toBe(
        "Authorization,Content-Type,If-None-Match,X-Request-ID,Idempotency-Key",
      );
      expect(preflight.headers.get("access-control-allow-methods")).toBe("GET,HEAD,POST,PATCH,DELETE");
      expect(preflight.headers.get("access-control-max-age")).toBe("600");
      expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();

      const { key } = await newAccount();
      const ok = await api("GET", "/account", { key, headers: { origin } });
      expect(ok.headers.get("access-control-allow-origin")).toBe("*");
      expect(ok.headers.get("access-control-expose-headers")?.split(",")).toEqual(
        expect.arrayContaining(["X-Request-ID", "RateLimit-Remaining", "Retry-After", "ETag", "Idempotent-Replayed"]),
      );
      const refused = await api("GET", "/account", { headers: { origin } });
      expectError(refused, 401, "missing_api_key");
      expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    });

    it("makes API responses inert in a browser, errors and unknown routes included", async () => {
      const { key } = await newAccount();
      for (const res of [
        await api("GET", "/account", { key }),
        await api("GET", "/account"),
        await api("GET", "/no-such-route", { key }),
      ]) {
        expect(res.headers.get("x-content-type-options")).toBe("nosniff");
        expect(res.headers.get("content-security-policy")).toBe("default-src 'none';frame-ancestors 'none'");
        expect(res.headers.get("x-frame-options")).toBe("DENY");
        expect(res.headers.get("referrer-policy")).toBe("no-referrer");
        expect(res.headers.get("x-powered-by")).toBeNull();
      }
    });

    it("sends redirects and short-link pages that cannot be sniffed or framed", async () => {
      const { key } = await newAccount();
      const { body: workspace } = await api("POST", "/workspaces", { key, body: { name: "Links" } });
      const { body: code } = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
        key,
        body: { name: "x", destination_url: "https://example.com/" },
      });
      const redirect = await fetch(code.vanity_url, { redirect: "manual" });
      expect(redirect.status).toBe(302);
      expect(redirect.headers.get("x-content-type-options")).toBe("nosniff");
      const missing = await fetch(`${stack.redirectorUrl}/zzzzzzzz`, { redirect: "manual" });
      expect(missing.status).toBe(404);
      expect(missing.headers.get("x-frame-options")).toBe("DENY");
      expect(missing.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    });
  });

  describeDynamicCodes(mode, {
    stack: () => stack,
    async accountWithWorkspace() {
      const account = await newAccount();
      const { body: workspace } = await api("POST", "/workspaces", { key: account.key, body: { name: "Codes" } });
      return { ...account, workspaceId: workspace.id as string };
    },
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
      expect(wrongItem.headers.get("allow")).toBe("GET, PATCH, DELETE, HEAD, OPTIONS");
      expectError(await api("POST", "/account"), 405, "method_not_allowed");
    });

    it("reports liveness and readiness outside the API", async () => {
      const root = stack.baseUrl.replace(/\/api\/v1$/, "");
      const live = await call(root, "GET", "/healthz");
      expect(live).toMatchObject({ status: 200, body: { status: "ok" } });
      const ready = await call(root, "GET", "/readyz");
      expect(ready).toMatchObject({
        status: 200,
        body: { status: "ready", services: { tenancy: "serving", catalog: "serving" } },
      });
    });
  });
}
