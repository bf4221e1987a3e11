// The text rule at the REST door, field by field, and exact read-back on whichever database the
// platform runs on (PGlite by default, Postgres with DATABASE_URL): what the issue found, as tests.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { call } from "./support/http.js";
import { startStack, type Stack } from "./support/stack.js";

describe("text fields", () => {
  let stack: Stack;
  let key: string;
  let workspaceId: string;

  beforeAll(async () => {
    stack = await startStack("in-process");
    const { account } = await stack.admin.createAccount({
      name: "Text",
      subscriptionTier: SubscriptionTier.ENTERPRISE,
    });
    ({ secret: key } = await stack.admin.createApiKey({ accountId: account!.id }));
    workspaceId = (await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Text" } })).body.id;
  }, 120_000);
  afterAll(() => stack?.close());

  const cases: [string, string, string, (value: string) => object][] = [
    ["POST", "/workspaces", "name", (v) => ({ name: v })],
    ["POST", "/workspaces", "description", (v) => ({ name: "ok", description: v })],
    ["PATCH", "/workspaces/{ws}", "name", (v) => ({ name: v })],
    ["PATCH", "/workspaces/{ws}", "description", (v) => ({ description: v })],
    ["POST", "/workspaces/{ws}/qr-codes", "name", (v) => ({ name: v, destination_url: "https://example.com" })],
    [
      "POST",
      "/workspaces/{ws}/qr-codes",
      "tags.0",
      (v) => ({ name: "ok", destination_url: "https://example.com", tags: [v] }),
    ],
    [
      "POST",
      "/workspaces/{ws}/qr-codes",
      "utm.source",
      (v) => ({ name: "ok", destination_url: "https://example.com", utm: { source: v } }),
    ],
  ];

  for (const [method, path, field, body] of cases) {
    it.each([
      ["NUL", "a\u0000b"],
      ["a lone surrogate", "a\ud800b"],
      ["a byte-order mark", "\ufeffname"],
      ["an escape", "\u001b[2J"],
    ])(`${method} ${path} refuses %s in ${field}: 400 naming the field`, async (_what, value) => {
      const res = await call(stack.baseUrl, method, path.replace("{ws}", workspaceId), { key, body: body(value) });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.details.fields).toContainEqual(
        expect.objectContaining({ field, reason: "invalid_characters" }),
      );
    });
  }

  it("refuses an empty campaign value with 400 naming it, as the document's minLength says", async () => {
    const res = await call(stack.baseUrl, "POST", `/workspaces/${workspaceId}/qr-codes`, {
      key,
      body: { name: "ok", destination_url: "https://example.com", utm: { source: "poster", medium: "" } },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([expect.objectContaining({ field: "utm.medium" })]);
  });

  it("reads accepted text back byte for byte, trimming only what the document says", async () => {
    const description = "\u2060leading word joiner\r\n\ttab, 😀, \u202e, ünïcödé \u200b";
    const created = await call(stack.baseUrl, "POST", "/workspaces", {
      key,
      body: { name: "\u00a0 Ⓝame 😀 \u2060", description },
    });
    expect(created.status).toBe(201);
    const read = await call(stack.baseUrl, "GET", `/workspaces/${created.body.id}`, { key });
    expect(read.body.name).toBe("Ⓝame 😀 \u2060");
    expect(read.body.description).toBe(description);

    const code = await call(stack.baseUrl, "POST", `/workspaces/${workspaceId}/qr-codes`, {
      key,
      body: {
        name: "\u2060x",
        destination_url: "https://example.com",
        tags: ["\u200bzero width", " 😀 "],
        utm: { campaign: "\u2060c" },
      },
    });
    expect(code.status).toBe(201);
    const again = await call(stack.baseUrl, "GET", `/qr-codes/${code.body.id}`, { key });
    expect([again.body.name, again.body.tags, again.body.utm.campaign]).toEqual([
      "\u2060x",
      ["\u200bzero width", "😀"],
      "\u2060c",
    ]);
  });
});
