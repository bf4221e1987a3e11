// Exports when renders queue up, through the REST edge: each account waits in its own queue, a full
// queue is refused at once with 429 render_queue_full, a client that disconnects drops its render, and
// a workspace archive is either refused before its first byte or sent whole, never cut.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { readZip } from "@qrplatform/testing";
import { call, expectError } from "./support/http.js";
import { startStack, type Stack } from "./support/stack.js";

let stack: Stack;
beforeAll(async () => {
  // One render at a time, and one more of each account may wait.
  stack = await startStack("in-process", {
    rendering: { concurrency: 1, concurrencyPerAccount: 1, queuedPerAccount: 1 },
  });
}, 120_000);
afterAll(() => stack?.close());

const api = (method: string, path: string, options?: Parameters<typeof call>[3]) =>
  call(stack.baseUrl, method, path, options);
const CODES_PER_WORKSPACE = 5;

/** An account whose workspace holds a few codes, for archives several renders long. */
async function accountWithWorkspace(on: Stack): Promise<{ key: string; workspaceId: string }> {
  const { account } = await on.admin.createAccount({
    name: `Archive ${randomBytes(3).toString("hex")}`,
    subscriptionTier: SubscriptionTier.SCALE,
  });
  const { secret: key } = await on.admin.createApiKey({ accountId: account!.id });
  const { body: workspace } = await call(on.baseUrl, "POST", "/workspaces", { key, body: { name: "Menus" } });
  for (let i = 1; i <= CODES_PER_WORKSPACE; i++) {
    await call(on.baseUrl, "POST", `/workspaces/${workspace.id}/qr-codes`, {
      key,
      body: { name: `Menu ${i}`, destination_url: `https://example.com/${i}` },
    });
  }
  return { key, workspaceId: workspace.id };
}

/**
 * Fires `count` concurrent archives of one account's workspace, each at its own size so no render is
 * shared, and checks every answer: a whole archive (every code's entry, every CRC right) or 429
 * render_queue_full with Retry-After before any byte. A transfer cut part way rejects `call`.
 */
async function archiveBurst(on: Stack, count: number): Promise<{ whole: number; refused: number }> {
  const { key, workspaceId } = await accountWithWorkspace(on);
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      call(on.baseUrl, "GET", `/workspaces/${workspaceId}/qr-codes/export?format=png&size=${1024 - i}`, { key }).catch(
        (error: unknown) => ({ cut: error }),
      ),
    ),
  );
  let whole = 0;
  let refused = 0;
  for (const answer of answers) {
    expect(answer, "an archive was cut part way").not.toHaveProperty("cut");
    if ("cut" in answer) continue;
    if (answer.status === 429) {
      expectError(answer, 429, "render_queue_full");
      expect(answer.headers.get("retry-after")).toBe("1");
      refused++;
      continue;
    }
    expect(answer.status).toBe(200);
    const entries = await readZip(answer.body);
    expect(entries.map((entry) => entry.name).sort()).toEqual(
      Array.from({ length: CODES_PER_WORKSPACE }, (_, i) => `menu-${i + 1}.png`),
    );
    whole++;
  }
  return { whole, refused };
}

async function accountWithCode(): Promise<{ key: string; codeId: string }> {
  const { account } = await stack.admin.createAccount({
    name: `Print ${randomBytes(3).toString("hex")}`,
    subscriptionTier: SubscriptionTier.SCALE,
  });
  const { secret: key } = await stack.admin.createApiKey({ accountId: account!.id });
  const { body: workspace } = await api("POST", "/workspaces", { key, body: { name: "Posters" } });
  const { body: code } = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
    key,
    body: { name: "Poster", destination_url: "https://example.com/" },
  });
  return { key, codeId: code.id };
}

/** Waits until `condition` holds; one that never does fails the test naming it, not by the test's timeout. */
async function until(condition: () => boolean): Promise<void> {
  await expect
    .poll(condition, { timeout: 20_000, interval: 10, message: `waiting for ${condition.toString()}` })
    .toBe(true);
}

describe("export queue", () => {
  it("refuses an account's export with 429 render_queue_full and Retry-After once its queue is full, while another account's is drawn", async () => {
    const a = await accountWithCode();
    const b = await accountWithCode();
    const rendersBefore = stack.renderCount!();
    const burst = [4096, 4095, 4094].map((size) =>
      api("GET", `/qr-codes/${a.codeId}/export?size=${size}`, { key: a.key }),
    );
    await until(() => stack.renderCount!() > rendersBefore && stack.renderer!.queuedRenders === 1);
    const other = await api("GET", `/qr-codes/${b.codeId}/export?size=256`, { key: b.key });
    expect(other.status).toBe(200);

    const answers = await Promise.all(burst);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 429]);
    const refused = answers.find((r) => r.status === 429)!;
    expectError(refused, 429, "render_queue_full");
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.headers.get("ratelimit-limit")).not.toBeNull();
  });

  it("drops the render of a client that disconnects while it waits", async () => {
    const a = await accountWithCode();
    const b = await accountWithCode();
    const rendersBefore = stack.renderCount!();
    const running = api("GET", `/qr-codes/${a.codeId}/export?size=4096`, { key: a.key });
    await until(() => stack.renderCount!() === rendersBefore + 1);

    const disconnect = new AbortController();
    const gone = fetch(`${stack.baseUrl}/qr-codes/${b.codeId}/export?size=4000`, {
      headers: { authorization: `Bearer ${b.key}` },
      signal: disconnect.signal,
    }).catch((error: unknown) => error);
    await until(() => stack.renderer!.queuedRenders === 1);
    disconnect.abort();
    await gone;
    await until(() => stack.renderer!.queuedRenders === 0);

    expect((await running).status).toBe(200);
    // Only the first image was drawn; the one nobody waits for never was.
    expect(stack.renderCount!()).toBe(rendersBefore + 1);
  });
});

describe.each(["in-process", "processes"] as const)("workspace archives under load (%s)", (mode) => {
  let shape: Stack;
  beforeAll(async () => {
    // One render at a time and one more waiting: an archive renders a few images ahead, so every
    // archive after the first meets a full queue.
    const env = { RENDER_CONCURRENCY: "1", RENDER_CONCURRENCY_PER_ACCOUNT: "1", RENDER_QUEUE_PER_ACCOUNT: "1" };
    shape = mode === "in-process" ? stack : await startStack(mode, { env: { rendering: env } });
  }, 120_000);
  afterAll(async () => {
    if (shape !== stack) await shape?.close();
  });

  it("sends one archive whole though its renders outnumber the account's queue", async () => {
    expect(await archiveBurst(shape, 1)).toEqual({ whole: 1, refused: 0 });
  });

  it("answers each of 8 concurrent archives of one account whole or with 429 before any byte", async () => {
    const { whole, refused } = await archiveBurst(shape, 8);
    expect(whole + refused).toBe(8);
    expect(whole).toBeGreaterThan(0);
  });
});
