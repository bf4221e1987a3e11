// Exports when renders queue up, through the REST edge: each account waits in its own queue, a full
// queue is refused at once with 429 render_queue_full, and a client that disconnects drops its render.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { call, expectError } from "./support/http.js";
import { startStack, type Stack } from "./support/stack.js";

let stack: Stack;
beforeAll(async () => {
  // One render at a time, and one more of each account may wait.
  stack = await startStack("in-process", { rendering: { concurrency: 1, concurrencyPerAccount: 1, queuedPerAccount: 1 } });
}, 120_000);
afterAll(() => stack?.close());

const api = (method: string, path: string, options?: Parameters<typeof call>[3]) => call(stack.baseUrl, method, path, options);

async function accountWithCode(): Promise<{ key: string; codeId: string }> {
  const { account } = await stack.admin.createAccount({ name: `Print ${randomBytes(3).toString("hex")}`, subscriptionTier: SubscriptionTier.SCALE });
  const { secret: key } = await stack.admin.createApiKey({ accountId: account!.id });
  const { body: workspace } = await api("POST", "/workspaces", { key, body: { name: "Posters" } });
  const { body: code } = await api("POST", `/workspaces/${workspace.id}/qr-codes`, { key, body: { name: "Poster", destination_url: "https://example.com/" } });
  return { key, codeId: code.id };
}

/** Waits until `condition` holds; one that never does fails the test naming it, not by the test's timeout. */
async function until(condition: () => boolean): Promise<void> {
  await expect.poll(condition, { timeout: 20_000, interval: 10, message: `waiting for ${condition.toString()}` }).toBe(true);
}

describe("export queue", () => {
  it("refuses an account's export with 429 render_queue_full and Retry-After once its queue is full, while another account's is drawn", async () => {
    const a = await accountWithCode();
    const b = await accountWithCode();
    const rendersBefore = stack.renderCount!();
    const burst = [4096, 4095, 4094].map((size) => api("GET", `/qr-codes/${a.codeId}/export?size=${size}`, { key: a.key }));
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
