// The REST contract of dynamic QR codes (issue 35): routing rules, lifetime, scan limit, password and the
// resolve preview, round-tripped through create, bulk create, PATCH and reads on either shape of the platform.
import { describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { errorInfoOf } from "@qrplatform/platform";
import { settledCount } from "@qrplatform/testing";
import { call, expectError, invalidFields, typedClient } from "./http.js";
import type { Stack, StackMode } from "./stack.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const JAPAN_RULE = {
  name: "Japan on phones",
  conditions: {
    countries: ["JP"],
    devices: ["mobile"],
    os: ["ios", "android"],
    languages: ["ja"],
    schedule: { time_zone: "Asia/Tokyo", days: ["mon", "tue"], from: "22:00", to: "06:00" },
    after: "2026-12-01T00:00:00.000Z",
    before: "2027-01-01T00:00:00.000Z",
  },
  destination_url: "https://example.jp/menu",
};
const SPLIT_RULE = {
  conditions: {},
  variants: [
    { destination_url: "https://a.example/", weight: 30 },
    { destination_url: "https://b.example/", weight: 70 },
  ],
};
const LIFETIME = {
  starts_at: "2026-11-01T00:00:00.000Z",
  expires_at: "2027-11-01T00:00:00.000Z",
  max_scans: 50,
  expired_url: "https://example.com/over",
};

/** What the suite needs of the REST suite: its stack and new accounts with a workspace. */
export interface DynamicCodesContext {
  stack: () => Stack;
  accountWithWorkspace: () => Promise<{ accountId: string; key: string; workspaceId: string }>;
}

export function describeDynamicCodes(mode: StackMode, ctx: DynamicCodesContext): void {
  const api = (method: string, path: string, options?: Parameters<typeof call>[3]) =>
    call(ctx.stack().baseUrl, method, path, options);
  const createCode = (key: string, workspaceId: string, body: Record<string, unknown>) =>
    api("POST", `/workspaces/${workspaceId}/qr-codes`, {
      key,
      body: { name: "Poster", destination_url: "https://example.com/menu", ...body },
    });

  describe(`[${mode}] dynamic QR codes`, () => {
    it("creates a code with every routing field, assigns rule ids, and reads them back without the password", async () => {
      const { key, workspaceId } = await ctx.accountWithWorkspace();
      const created = await createCode(key, workspaceId, {
        rules: [JAPAN_RULE, SPLIT_RULE],
        ...LIFETIME,
        password: "correct horse",
      });
      expect(created.status).toBe(201);
      const code = created.body;
      expect(code.rules).toHaveLength(2);
      expect(code.rules[0]).toEqual({ ...JAPAN_RULE, id: expect.stringMatching(UUID) });
      expect(code.rules[1]).toEqual({ ...SPLIT_RULE, id: expect.stringMatching(UUID) });
      expect(code).toMatchObject({ ...LIFETIME, password_protected: true, lifecycle: "live" });
      expect(code).not.toHaveProperty("password");

      const read = await api("GET", `/qr-codes/${code.id}`, { key });
      expect(read.body).toEqual(code);
      const listed = await api("GET", `/workspaces/${workspaceId}/qr-codes`, { key });
      expect(listed.body.data[0]).toEqual(code);
    });

    it("shows a code without routing with empty rules, nulls and lifecycle live", async () => {
      const { key, workspaceId } = await ctx.accountWithWorkspace();
      const { body } = await createCode(key, workspaceId, {});
      expect(body).toMatchObject({
        rules: [],
        starts_at: null,
        expires_at: null,
        max_scans: null,
        expired_url: null,
        password_protected: false,
        lifecycle: "live",
      });
    });

    it("PATCH replaces the fields it sends: the whole rules array, kept ids, null clearing", async () => {
      const { key, workspaceId } = await ctx.accountWithWorkspace();
      const { body: code } = await createCode(key, workspaceId, {
        rules: [JAPAN_RULE],
        ...LIFETIME,
        password: "a password",
      });
      const kept = code.rules[0];

      const patched = await api("PATCH", `/qr-codes/${code.id}`, {
        key,
        body: { rules: [SPLIT_RULE, { ...kept, name: "Renamed" }], expires_at: null, password: null },
      });
      expect(patched.status).toBe(200);
      expect(patched.body.rules[1]).toEqual({ ...kept, name: "Renamed" });
      expect(patched.body.rules[0].id).toMatch(UUID);
      expect(patched.body.rules[0].id).not.toBe(kept.id);
      expect(patched.body).toMatchObject({
        starts_at: LIFETIME.starts_at,
        expires_at: null,
        max_scans: 50,
        expired_url: LIFETIME.expired_url,
        password_protected: false,
      });

      // A PATCH without routing fields leaves them as they are.
      const renamed = await api("PATCH", `/qr-codes/${code.id}`, { key, body: { name: "Other" } });
      expect(renamed.body.rules).toEqual(patched.body.rules);
      const cleared = await api("PATCH", `/qr-codes/${code.id}`, { key, body: { rules: [], max_scans: null } });
      expect(cleared.body).toMatchObject({ rules: [], max_scans: null, starts_at: LIFETIME.starts_at });
      expect((await api("GET", `/qr-codes/${code.id}`, { key })).body).toEqual(cleared.body);
    });

    it("reports lifecycle scheduled and expired from the lifetime", async () => {
      const { key, workspaceId } = await ctx.accountWithWorkspace();
      const scheduled = await createCode(key, workspaceId, { starts_at: "2999-01-01T00:00:00Z" });
      expect(scheduled.body).toMatchObject({ lifecycle: "scheduled", starts_at: "2999-01-01T00:00:00.000Z" });
      const expired = await createCode(key, workspaceId, { expires_at: "2001-01-01T00:00:00+02:00" });
      expect(expired.body).toMatchObject({ lifecycle: "expired", expires_at: "2000-12-31T22:00:00.000Z" });
    });

    it("answers 400 validation_error naming each bad routing field by its path", async () => {
      const { key, workspaceId } = await ctx.accountWithWorkspace();
      const bad = await createCode(key, workspaceId, {
        tags: "print",
        rules: [
          JAPAN_RULE,
          JAPAN_RULE,
          JAPAN_RULE,
          {
            conditions: { countries: ["JP", "XX"], schedule: { time_zone: "Mars/Olympus" } },
            variants: [
              { destination_url: "https://a.example/", weight: 50 },
              { destination_url: "https://b.example/", weight: 51 },
            ],
          },
        ],
        starts_at: "2027-01-01T00:00:00Z",
        expires_at: "2026-01-01T00:00:00Z",
        password: "short",
      });
      expectError(bad, 400, "validation_error");
      expect(invalidFields(bad)).toEqual(
        expect.arrayContaining([
          "tags",
          "rules[3].conditions.countries[1]",
          "rules[3].conditions.schedule.time_zone",
          "rules[3].variants",
          "expires_at",
          "password",
        ]),
      );

      const tooMany = await createCode(key, workspaceId, {
        rules: Array.from({ length: 51 }, () => ({ destination_url: "https://a.example/" })),
      });
      expect(invalidFields(tooMany)).toEqual(["rules"]);
      const withId = await createCode(key, workspaceId, { rules: [{ ...JAPAN_RULE, id: crypto.randomUUID() }] });
      expect(withId.body.error.details.fields).toEqual([
        expect.objectContaining({ field: "rules[0].id", reason: "unknown_rule" }),
      ]);
      const readOnly = await createCode(key, workspaceId, { lifecycle: "live", password_protected: true });
      expect(invalidFields(readOnly).sort()).toEqual(["lifecycle", "password_protected"]);

      const { body: code } = await createCode(key, workspaceId, { starts_at: "2027-01-01T00:00:00Z" });
      // The stored start is checked against a new end, by the links service: a service's path, translated.
      const lateEnd = await api("PATCH", `/qr-codes/${code.id}`, { key, body: { expires_at: "2026-06-01T00:00:00Z" } });
      expectError(lateEnd, 400, "validation_error");
      expect(invalidFields(lateEnd)).toEqual(["expires_at"]);
      const ownDomain = await api("PATCH", `/qr-codes/${code.id}`, {
        key,
        body: {
          rules: [
            {
              variants: [
                { destination_url: "https://a.example/", weight: 50 },
                { destination_url: code.canonical_url, weight: 50 },
              ],
            },
          ],
        },
      });
      expect(ownDomain.body.error.details.fields).toEqual([
        expect.objectContaining({ field: "rules[0].variants[1].destination_url", reason: "short_link_destination" }),
      ]);
      expect((await api("GET", `/qr-codes/${code.id}`, { key })).body.rules).toEqual([]);
    });

    it("bulk creates codes with routing, reporting each item's problems in its result", async () => {
      const { key, workspaceId } = await ctx.accountWithWorkspace();
      const res = await api("POST", `/workspaces/${workspaceId}/qr-codes/bulk`, {
        key,
        body: {
          items: [
            { name: "A", destination_url: "https://example.com/a", rules: [SPLIT_RULE], max_scans: 10 },
            {
              name: "B",
              destination_url: "https://example.com/b",
              rules: [{ conditions: { os: ["beos"] }, destination_url: "https://x.example/" }],
            },
          ],
        },
      });
      expect(res.status).toBe(200);
      expect(res.body.created).toBe(1);
      expect(res.body.results[0].qr_code).toMatchObject({
        max_scans: 10,
        rules: [{ ...SPLIT_RULE, id: expect.stringMatching(UUID) }],
      });
      expect(res.body.results[1].status).toBe(400);
      expect(res.body.results[1].error.details.fields.map((f: { field: string }) => f.field)).toEqual([
        "rules[0].conditions.os[0]",
      ]);
    });

    it("resolves what a visitor would get, without counting a scan", async () => {
      const { key, workspaceId } = await ctx.accountWithWorkspace();
      const { body: code } = await createCode(key, workspaceId, {
        utm: { source: "qr" },
        rules: [
          {
            conditions: { countries: ["JP"], devices: ["mobile"], languages: ["ja"] },
            destination_url: "https://example.jp/",
          },
          SPLIT_RULE,
        ],
        starts_at: "2026-06-01T00:00:00Z",
        expires_at: "2027-06-01T00:00:00Z",
      });
      const resolve = (query: string) => api("GET", `/qr-codes/${code.id}/resolve?${query}`, { key });

      const japan = await resolve("country=jp&device=mobile&os=ios&language=ja&at=2026-12-01T09:00:00Z");
      expect(japan.status).toBe(200);
      expect(japan.body).toEqual({
        qr_code_id: code.id,
        outcome: "rule",
        destination_url: "https://example.jp/?utm_source=qr",
        rule_id: code.rules[0].id,
        variant: null,
      });
      const split = await resolve("country=DE&at=2026-12-01T09:00:00Z");
      expect(split.body).toMatchObject({ outcome: "rule", rule_id: code.rules[1].id });
      expect([0, 1]).toContain(split.body.variant);
      expect((await resolve("at=2026-01-01T00:00:00Z")).body).toMatchObject({
        outcome: "scheduled",
        destination_url: null,
      });
      expect((await resolve("at=2027-06-01T00:00:00Z")).body).toMatchObject({
        outcome: "expired",
        destination_url: null,
      });

      const bad = await resolve("country=Japan&device=phone&at=yesterday");
      expectError(bad, 400, "validation_error");
      expect(invalidFields(bad).sort()).toEqual(["at", "country", "device"]);
      expect((await api("GET", `/qr-codes/${code.id}`, { key })).body.total_scans).toBe(0);

      // The typed client knows the operation.
      const client = typedClient(ctx.stack().baseUrl, key);
      const typed = await client.GET("/qr-codes/{id}/resolve", {
        params: {
          path: { id: code.id },
          query: { country: "JP", device: "mobile", language: "ja", at: "2026-12-01T09:00:00Z" },
        },
      });
      expect(typed.data?.outcome).toBe("rule");
    });

    it("resolves as real scans redirect, for a table of visitors", async () => {
      const { key, workspaceId } = await ctx.accountWithWorkspace();
      const { body: code } = await createCode(key, workspaceId, {
        destination_url: "https://example.com/default",
        rules: [
          { conditions: { os: ["ios"], languages: ["ja"] }, destination_url: "https://example.com/ios-ja" },
          { conditions: { devices: ["mobile"] }, destination_url: "https://example.com/mobile" },
          { conditions: { os: ["windows"] }, destination_url: "https://example.com/windows" },
        ],
      });
      const IPHONE =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
      const ANDROID =
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36";
      const WINDOWS =
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36";
      const MAC =
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15";
      const visitors = [
        { ua: IPHONE, language: "ja-JP,ja;q=0.9", query: "device=mobile&os=ios&language=ja", expected: "ios-ja" },
        { ua: IPHONE, language: "en-US", query: "device=mobile&os=ios&language=en", expected: "mobile" },
        { ua: ANDROID, language: "ja", query: "device=mobile&os=android&language=ja", expected: "mobile" },
        { ua: WINDOWS, language: "de", query: "device=desktop&os=windows&language=de", expected: "windows" },
        { ua: MAC, language: "fr", query: "device=desktop&os=macos&language=fr", expected: "default" },
      ];
      for (const visitor of visitors) {
        const scanned = await fetch(code.vanity_url, {
          redirect: "manual",
          headers: { "user-agent": visitor.ua, "accept-language": visitor.language },
        });
        expect(scanned.status, visitor.query).toBe(302);
        const previewed = await api("GET", `/qr-codes/${code.id}/resolve?${visitor.query}`, { key });
        expect(previewed.body.destination_url, visitor.query).toBe(scanned.headers.get("location"));
        expect(scanned.headers.get("location"), visitor.query).toBe(`https://example.com/${visitor.expected}`);
      }
    });

    it("counts in analytics exactly the redirects each rule and each variant of a split made", async () => {
      const { key, workspaceId } = await ctx.accountWithWorkspace();
      const { body: code } = await createCode(key, workspaceId, {
        destination_url: "https://example.com/default",
        rules: [
          { conditions: { countries: ["JP"] }, destination_url: "https://example.jp/menu" },
          {
            conditions: { countries: ["DE", "US"] },
            variants: [
              { destination_url: "https://a.example/", weight: 50 },
              { destination_url: "https://b.example/", weight: 50 },
            ],
          },
        ],
      });
      const [japan, split] = code.rules.map((rule: { id: string }) => rule.id);
      const IPHONE =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
      const COUNTRIES = ["JP", "DE", "US", "FR", "DE", "US", "JP", "BR", "DE", "US"];
      // Where each redirect went, as the visitor saw it: the rule's, a variant's or the code's own destination.
      const made = new Map<string, number>();
      const visits = 60;
      for (let i = 0; i < visits; i++) {
        // A visitor of its own (address and so key) in one of the countries, behind the trusted proxy.
        const scanned = await fetch(code.vanity_url, {
          redirect: "manual",
          headers: {
            "user-agent": IPHONE,
            "x-forwarded-for": `203.0.113.${i + 1}`,
            "cf-ipcountry": COUNTRIES[i % COUNTRIES.length]!,
          },
        });
        expect(scanned.status).toBe(302);
        const location = scanned.headers.get("location")!;
        made.set(location, (made.get(location) ?? 0) + 1);
      }
      // Neither a bot nor a HEAD is a scan, whichever rule answers them.
      const bot = { "user-agent": "facebookexternalhit/1.1", "cf-ipcountry": "JP" };
      expect((await fetch(code.vanity_url, { redirect: "manual", headers: bot })).status).toBe(302);
      const head = { "user-agent": IPHONE, "cf-ipcountry": "DE" };
      expect((await fetch(code.vanity_url, { method: "HEAD", redirect: "manual", headers: head })).status).toBe(302);

      const [first, second] = [made.get("https://a.example/") ?? 0, made.get("https://b.example/") ?? 0];
      // Thirty-six visitors of DE and US split 50/50 by their keys: both variants had some.
      expect(first + second).toBe(36);
      expect(first).toBeGreaterThan(0);
      expect(second).toBeGreaterThan(0);
      const analytics = async () => (await api("GET", `/qr-codes/${code.id}/analytics`, { key })).body;
      await settledCount(async () => (await analytics()).total_scans, visits);
      const { status, body } = await api("GET", `/qr-codes/${code.id}/analytics`, { key });
      expect(status).toBe(200);
      const expected = [
        { rule_id: split, scans: 36, variants: [first, second].map((scans, variant) => ({ variant, scans })) },
        { rule_id: japan, scans: made.get("https://example.jp/menu") ?? 0, variants: [] },
        { rule_id: null, scans: made.get("https://example.com/default") ?? 0, variants: [] },
      ];
      expect(expected.map((entry) => entry.scans)).toEqual([36, 12, 12]);
      expect(body.total_scans).toBe(visits);
      expect(body.rules).toEqual(
        expected.sort(
          (a, b) =>
            b.scans - a.scans || (a.rule_id === null ? 1 : b.rule_id === null ? -1 : a.rule_id < b.rule_id ? -1 : 1),
        ),
      );
      expect(body.countries).toEqual(
        expect.arrayContaining([
          { value: "JP", scans: 12 },
          { value: "DE", scans: 18 },
        ]),
      );

      // The typed client reads the same.
      const typed = await typedClient(ctx.stack().baseUrl, key).GET("/qr-codes/{id}/analytics", {
        params: { path: { id: code.id } },
      });
      expect(typed.data?.rules).toEqual(body.rules);
    });

    it("keeps routing inside the account: another account's code is 404 on PATCH and resolve", async () => {
      const owner = await ctx.accountWithWorkspace();
      const other = await ctx.accountWithWorkspace();
      const { body: code } = await createCode(owner.key, owner.workspaceId, { rules: [JAPAN_RULE] });
      expectError(
        await api("PATCH", `/qr-codes/${code.id}`, { key: other.key, body: { rules: [] } }),
        404,
        "not_found",
      );
      expectError(await api("GET", `/qr-codes/${code.id}/resolve`, { key: other.key }), 404, "not_found");
      expect((await api("GET", `/qr-codes/${code.id}`, { key: owner.key })).body.rules).toHaveLength(1);
    });

    it("answers INVALID_ARGUMENT over gRPC naming each routing field by its proto path", async () => {
      const { accountId, workspaceId } = await ctx.accountWithWorkspace();
      const error = await ctx
        .stack()
        .catalog.createQrCode({
          accountId,
          workspaceId,
          name: "Poster",
          destinationUrl: "https://example.com/",
          routing: {
            rules: [{ conditions: { schedule: { timeZone: "Nowhere/Else" } }, destinationUrl: "https://a.example/" }],
            maxScans: 0n,
          },
        })
        .then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
      expect(error?.code).toBe(Code.InvalidArgument);
      expect(errorInfoOf(error!)?.fieldViolations.map((v) => v.field)).toEqual([
        "routing.rules.0.conditions.schedule.time_zone",
        "routing.max_scans",
      ]);
    });
  });
}
