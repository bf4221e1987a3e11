// The access log's volume: one line per API request at the default level, none per short-link redirect
// (a busy link would write one per scan); the redirects' lines appear at debug level.
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { createLogger, type Logger } from "@qrplatform/platform";
import { call } from "./support/http.js";
import { startStack, type Stack } from "./support/stack.js";

describe("the access log", () => {
  let stack: Stack;
  let logger: Logger;
  const lines: { level: number; msg: string; req?: { url: string }; url?: string }[] = [];

  beforeAll(async () => {
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(
          ...chunk
            .toString()
            .trim()
            .split("\n")
            .map((line) => JSON.parse(line) as (typeof lines)[number]),
        );
        done();
      },
    });
    logger = createLogger({ service: "test", level: "info", destination });
    stack = await startStack("in-process", { logger });
  }, 120_000);
  afterAll(() => stack?.close());

  it("writes one line per API request and none per redirect at info level; one per redirect at debug level", async () => {
    const { account } = await stack.admin.createAccount({ name: "Logged", subscriptionTier: SubscriptionTier.ORIGIN });
    const { secret: key } = await stack.admin.createApiKey({ accountId: account!.id, scopes: [] });
    const workspace = await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Logged" } });
    const created = await call(stack.baseUrl, "POST", `/workspaces/${workspace.body.id}/qr-codes`, {
      key,
      body: { name: "Menu", destination_url: "https://example.com/menu" },
    });
    expect(created.status).toBe(201);
    const slug = new URL(created.body.vanity_url as string).pathname;
    const redirects = async (n: number) => {
      for (let i = 0; i < n; i++)
        expect((await fetch(created.body.vanity_url, { redirect: "manual" })).status).toBe(302);
    };
    const aboutSlug = () => lines.filter((line) => line.req?.url === slug || line.url === slug);

    await redirects(20);
    expect(aboutSlug()).toEqual([]);
    const apiLines = lines.filter(
      (line) => line.msg === "request completed" && line.req?.url.startsWith("/api/v1/workspaces"),
    );
    expect(apiLines.map((line) => line.level)).toEqual([30, 30]);

    logger.level = "debug";
    await redirects(20);
    // Each line is written when its response has finished, which may be just after the client has it.
    await expect.poll(() => aboutSlug().length).toBe(20);
    expect(aboutSlug().every((line) => line.level === 20 && line.msg === "short link")).toBe(true);
  });
});
