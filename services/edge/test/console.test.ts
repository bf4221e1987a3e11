import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRouterTransport } from "@connectrpc/connect";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildEdge } from "../src/server.js";
import { CONSOLE_CSP, consoleDirFromEnv, consoleEnv } from "../src/http/console.js";

// How the edge serves the built console: a folder as Vite leaves it (index.html, hashed assets/).
describe("the console at /console/", () => {
  let dir: string;
  let base: string;
  let close: () => void;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "qrp-console-"));
    mkdirSync(join(dir, "assets"));
    writeFileSync(
      join(dir, "index.html"),
      '<!doctype html><div id="app"></div><script type="module" src="/console/assets/index-abc123.js"></script>',
    );
    writeFileSync(join(dir, "assets/index-abc123.js"), "console.log('hi')");
    const none = createRouterTransport(() => {});
    const app = buildEdge({
      transports: { tenancy: none, catalog: none, links: none, rendering: none },
      logger: pino({ level: "silent" }),
      consoleDir: dir,
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => {
    close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers index.html uncached, with a policy that allows no inline script, no eval and no other host", async () => {
    const response = await fetch(`${base}/console/`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(response.headers.get("cache-control")).toBe("no-cache");
    const csp = response.headers.get("content-security-policy")!;
    expect(csp).toBe(CONSOLE_CSP);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(await response.text()).toContain('<div id="app">');
  });

  it("answers a client route with index.html, so a reload of any page works", async () => {
    for (const path of [
      "/console/qr-codes",
      "/console/qr-codes/0b6d5f7e-3f7c-4a57-9a11-2a7e3d2f8e10",
      "/console/webhooks",
    ]) {
      const response = await fetch(`${base}${path}`);
      expect(response.status, path).toBe(200);
      expect(await response.text()).toContain('<div id="app">');
      expect(response.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
    }
  });

  it("serves hashed assets as immutable for a year, and a missing one as 404 rather than the page", async () => {
    const asset = await fetch(`${base}/console/assets/index-abc123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(asset.headers.get("content-type")).toMatch(/javascript/);
    expect(asset.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
    const missing = await fetch(`${base}/console/assets/index-gone.js`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).not.toContain('<div id="app">');
    expect((await fetch(`${base}/console/favicon.ico`)).status).toBe(404);
  });

  it("sends /console to /console/ and refuses writes", async () => {
    const bare = await fetch(`${base}/console`, { redirect: "manual" });
    expect(bare.status).toBe(301);
    expect(bare.headers.get("location")).toBe("/console/");
    const post = await fetch(`${base}/console/qr-codes`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toContain("GET");
  });
});

describe("CONSOLE_ENABLED", () => {
  it("serves the built console unless it is false", () => {
    expect(consoleDirFromEnv(consoleEnv.parse({}))).toMatch(/services[/\\]console[/\\]dist$/);
    expect(consoleDirFromEnv(consoleEnv.parse({ CONSOLE_ENABLED: "" }))).toMatch(/dist$/);
    expect(consoleDirFromEnv(consoleEnv.parse({ CONSOLE_ENABLED: "false" }))).toBeUndefined();
    expect(() => consoleEnv.parse({ CONSOLE_ENABLED: "yes" })).toThrow();
  });

  it("leaves /console/ to the 404 envelope when the edge has no console", async () => {
    const none = createRouterTransport(() => {});
    const app = buildEdge({
      transports: { tenancy: none, catalog: none, links: none, rendering: none },
      logger: pino({ level: "silent" }),
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/console/`);
      expect(response.status).toBe(404);
      expect(((await response.json()) as any).error.code).toBe("route_not_found");
    } finally {
      server.close();
    }
  });
});
