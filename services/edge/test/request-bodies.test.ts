// What a JSON body's bytes must be before anything reads them: valid UTF-8, nested at most
// MAX_JSON_DEPTH levels. Both are refused with 400 and the envelope, with and without an
// Idempotency-Key (whose fingerprint walks the parsed body), and nothing is made.
import { randomBytes, randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../src/http/input.js";
import { call, expectError } from "./support/http.js";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { startStack, type Stack } from "./support/stack.js";

describe("request bodies", () => {
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    // The edge's default limit, 1 MiB, which the 100,000-200,000 levels a client may send fit in.
    stack = await startStack("in-process", { maxBodyBytes: 1024 * 1024 });
    const { account } = await stack.admin.createAccount({
      name: `Bodies ${randomBytes(3).toString("hex")}`,
      subscriptionTier: SubscriptionTier.ORIGIN,
    });
    key = (await stack.admin.createApiKey({ accountId: account!.id })).secret;
  }, 180_000);
  afterAll(() => stack?.close());

  function postRaw(body: Uint8Array | string, idempotencyKey?: string, headers: Record<string, string> = {}) {
    return call(stack.baseUrl, "POST", "/workspaces", {
      key,
      body: typeof body === "string" ? body : new Uint8Array(body),
      headers: {
        "content-type": "application/json",
        ...(idempotencyKey && { "idempotency-key": idempotencyKey }),
        ...headers,
      },
    });
  }

  async function workspaceNames(): Promise<string[]> {
    const res = await call(stack.baseUrl, "GET", "/workspaces?limit=100", { key });
    return res.body.data.map((w: { name: string }) => w.name);
  }

  const deepBodies = {
    "arrays 150,000 deep": `{"name":${"[".repeat(150_000)}${"]".repeat(150_000)}}`,
    "objects 150,000 deep": `{"name":"x","description":${'{"a":'.repeat(150_000)}1${"}".repeat(150_000)}}`,
    "a top-level array 200,000 deep": `${"[".repeat(200_000)}${"]".repeat(200_000)}`,
    [`arrays ${MAX_JSON_DEPTH + 1} deep`]: `{"name":${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}}`,
  };

  for (const [what, body] of Object.entries(deepBodies)) {
    it(`refuses ${what} with 400 json_too_deep, with and without an Idempotency-Key`, async () => {
      for (const idempotencyKey of [undefined, randomUUID()]) {
        const res = await postRaw(body, idempotencyKey);
        expectError(res, 400, "json_too_deep");
        expect(res.body.error.details).toEqual({ max_depth: MAX_JSON_DEPTH });
      }
    });
  }

  it("reads a body exactly MAX_JSON_DEPTH deep, and brackets inside strings do not count", async () => {
    // The body object is level 1: the name's arrays add MAX_JSON_DEPTH - 1 more.
    const deepest = await postRaw(
      `{"name":${"[".repeat(MAX_JSON_DEPTH - 1)}${"]".repeat(MAX_JSON_DEPTH - 1)}}`,
      randomUUID(),
    );
    expectError(deepest, 400, "validation_error");
    // 80 opening brackets, a quote and a backslash, all inside the string.
    const name = `${"[{".repeat(40)} "quoted" \\ ${"]".repeat(5)}`;
    const res = await postRaw(JSON.stringify({ name }), randomUUID());
    expect(res.status).toBe(201);
    expect(res.body.name).toBe(name);
  });

  const invalidUtf8 = {
    "a lead byte without its continuation (C3 28)": [0xc3, 0x28],
    "a lone continuation byte (80)": [0x80],
    "a surrogate encoded as bytes (ED A0 80)": [0xed, 0xa0, 0x80],
    "a low surrogate encoded as bytes (ED BF BF)": [0xed, 0xbf, 0xbf],
    "an overlong slash (C0 AF)": [0xc0, 0xaf],
    "an overlong NUL (E0 80 80)": [0xe0, 0x80, 0x80],
    "a code point above U+10FFFF (F4 90 80 80)": [0xf4, 0x90, 0x80, 0x80],
    "a truncated sequence at the end of the string (E2 82)": [0xe2, 0x82],
  };

  for (const [what, bytes] of Object.entries(invalidUtf8)) {
    it(`refuses ${what} with 400 invalid_utf8 and stores nothing`, async () => {
      const marker = `Broken ${randomBytes(3).toString("hex")} `;
      const body = Buffer.concat([Buffer.from(`{"name":"${marker}`), Buffer.from(bytes), Buffer.from('"}')]);
      for (const idempotencyKey of [undefined, randomUUID()]) {
        expectError(await postRaw(body, idempotencyKey), 400, "invalid_utf8");
      }
      expectError(await postRaw(gzipSync(body), undefined, { "content-encoding": "gzip" }), 400, "invalid_utf8");
      expect((await workspaceNames()).filter((n) => n.startsWith(marker))).toEqual([]);
    });
  }

  it("refuses invalid UTF-8 in a PATCH body too, and keeps valid multi-byte text exactly", async () => {
    const made = await postRaw(JSON.stringify({ name: "Café 🎉 東京" }));
    expect(made.status).toBe(201);
    expect(made.body.name).toBe("Café 🎉 東京");
    const patch = Buffer.concat([Buffer.from('{"name":"Caf'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const res = await call(stack.baseUrl, "PATCH", `/workspaces/${made.body.id}`, {
      key,
      body: new Uint8Array(patch),
      headers: { "content-type": "application/json" },
    });
    expectError(res, 400, "invalid_utf8");
    expect((await call(stack.baseUrl, "GET", `/workspaces/${made.body.id}`, { key })).body.name).toBe("Café 🎉 東京");
  });
});
