// Bulk create: up to 100 QR codes in one call, each created or refused exactly as the single create
// would, capacity counted per item, and safe to retry with an Idempotency-Key. Both shapes.
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { call, expectError, invalidFields, typedClient } from "./support/http.js";
import { startStack, type Stack, type StackMode } from "./support/stack.js";

const MODES: StackMode[] = ["in-process", "processes"];

describe.each(MODES)("bulk create [%s]", (mode) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack(mode);
  }, 180_000);
  afterAll(() => stack?.close());

  async function accountWithWorkspace(tier = SubscriptionTier.ORIGIN) {
    const { account } = await stack.admin.createAccount({ name: `Bulk ${randomBytes(3).toString("hex")}`, subscriptionTier: tier });
    const { secret: key } = await stack.admin.createApiKey({ accountId: account!.id });
    const workspace = await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Bulk" } });
    return { accountId: account!.id, key, workspaceId: workspace.body.id as string };
  }

  const bulk = (key: string, workspaceId: string, body: unknown, headers: Record<string, string> = {}) =>
    call(stack.baseUrl, "POST", `/workspaces/${workspaceId}/qr-codes/bulk`, { key, body, headers });

  async function codesIn(key: string, workspaceId: string): Promise<{ id: string; name: string }[]> {
    const res = await call(stack.baseUrl, "GET", `/workspaces/${workspaceId}/qr-codes?limit=100`, { key });
    expect(res.status).toBe(200);
    return res.body.data;
  }

  /** What the single create answers for an item, without what differs per request (ids, times, request ids). */
  function comparable(status: number, error: { code: string; message: string; details?: unknown } | undefined) {
    return { status, code: error?.code, message: error?.message, details: error?.details };
  }

  it("creates 100 codes in one call, answering each in order", async () => {
    const { key, workspaceId } = await accountWithWorkspace();
    const items = Array.from({ length: 100 }, (_, i) => ({ name: `Table ${i}`, destination_url: `https://example.com/t/${i}`, tags: ["bulk"] }));
    const res = await bulk(key, workspaceId, { items });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 100, failed: 0 });
    expect(res.body.results.map((r: { index: number; status: number }) => [r.index, r.status])).toEqual(items.map((_, i) => [i, 201]));
    expect(res.body.results.map((r: { qr_code: { name: string } }) => r.qr_code.name)).toEqual(items.map((item) => item.name));
    const listed = await codesIn(key, workspaceId);
    expect(listed.map((c) => c.id).sort()).toEqual(res.body.results.map((r: { qr_code: { id: string } }) => r.qr_code.id).sort());
  });

  it("answers each failing item with the status and error object the single create gives, and creates the others", async () => {
    const { key, workspaceId } = await accountWithWorkspace();
    const items = [
      { name: "Fine", destination_url: "https://example.com/fine" },
      { name: "Bad URL", destination_url: "not a url" },
      { name: "Unknown field", destination_url: "https://example.com/x", colour: "red" },
      { name: "Circle", destination_url: "https://example.com/circle", design: { frame: { enabled: true, type: "circle" } } },
      { name: "Unknown domain", destination_url: "https://example.com/d", vanity_domain_id: randomUUID(), vanity_slug: "menu" },
      { name: "", destination_url: "https://example.com/empty" },
      { name: "Also fine", destination_url: "https://example.com/also" },
    ];
    const res = await bulk(key, workspaceId, { items });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 2, failed: 5 });
    for (const [index, item] of items.entries()) {
      const result = res.body.results[index];
      expect(result.index).toBe(index);
      if (result.status === 201) continue;
      expect(result.error.request_id).toBe(res.headers.get("x-request-id"));
      const single = await call(stack.baseUrl, "POST", `/workspaces/${workspaceId}/qr-codes`, {
        key,
        body: JSON.stringify(item),
        headers: { "content-type": "application/json" },
      });
      expect(comparable(result.status, result.error), JSON.stringify(item)).toEqual(comparable(single.status, single.body.error));
    }
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([201, 400, 400, 403, 404, 400, 201]);
    expect((await codesIn(key, workspaceId)).map((c) => c.name).sort()).toEqual(["Also fine", "Fine"]);
  });

  it("refuses a call that is not 1 to 100 items, or names no workspace of the account, as a whole", async () => {
    const { key, workspaceId } = await accountWithWorkspace();
    const item = { name: "x", destination_url: "https://example.com/" };
    expect(invalidFields(await bulk(key, workspaceId, { items: [] }))).toEqual(["items"]);
    expect(invalidFields(await bulk(key, workspaceId, { items: Array(101).fill(item) }))).toEqual(["items"]);
    expect(invalidFields(await bulk(key, workspaceId, [item]))).toEqual(["(body)"]);
    expect(invalidFields(await bulk(key, workspaceId, { items: [item], extra: 1 }))).toEqual(["extra"]);
    expectError(await bulk(key, randomUUID(), { items: [item] }), 404, "not_found");
    expect(await codesIn(key, workspaceId)).toEqual([]);
  });

  it("counts capacity per item: the items that fit are created, the rest fail with qr_code_limit_reached", async () => {
    const { key, workspaceId } = await accountWithWorkspace();
    // Filled through the API: in the in-process shape a long pause without HTTP lets the server close an idle
    // keep-alive socket in the same turn as the client reuses it (ECONNRESET), as the two share one event loop.
    const fillers = await bulk(key, workspaceId, { items: Array.from({ length: 95 }, (_, i) => ({ name: `Filler ${i}`, destination_url: "https://example.com/" })) });
    expect(fillers.body).toMatchObject({ created: 95, failed: 0 });
    const res = await bulk(key, workspaceId, { items: Array.from({ length: 10 }, (_, i) => ({ name: `Over ${i}`, destination_url: "https://example.com/over" })) });
    expect(res.body).toMatchObject({ created: 5, failed: 5 });
    for (const result of res.body.results.filter((r: { status: number }) => r.status !== 201)) {
      expect(result).toMatchObject({ status: 403, error: { code: "qr_code_limit_reached", details: { limit: 100, used: 100 } } });
    }
    expect(await codesIn(key, workspaceId)).toHaveLength(100);
  });

  it("runs once for concurrent retries with one Idempotency-Key, through the typed client", async () => {
    const { key, workspaceId } = await accountWithWorkspace();
    const client = typedClient(stack.baseUrl, key);
    const idempotencyKey = randomUUID();
    const items = [0, 1, 2].map((i) => ({ name: `Retried ${i}`, destination_url: `https://example.com/r/${i}` }));
    const send = () =>
      client.POST("/workspaces/{workspace_id}/qr-codes/bulk", {
        params: { path: { workspace_id: workspaceId }, header: { "Idempotency-Key": idempotencyKey } },
        body: { items },
      });
    const answers = await Promise.all(Array.from({ length: 10 }, send));
    expect(answers.map((a) => a.response.status)).toEqual(Array(10).fill(200));
    expect(answers.map((a) => a.data)).toEqual(Array(10).fill(answers[0]!.data));
    expect(answers.filter((a) => a.response.headers.get("idempotent-replayed") === "true")).toHaveLength(9);
    expect(await codesIn(key, workspaceId)).toHaveLength(3);
  });
});
