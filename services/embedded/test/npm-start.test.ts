// What a new user does after `npm start`: create an account and a key with qrctl (no flags), call the
// API with the key, create a QR code and follow its short link; then SIGTERM stops the process cleanly.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { accountWithKey, startPlatformProcess } from "@qrplatform/testing/platform-process";

const dataDir = mkdtempSync(join(tmpdir(), "qrp-npm-start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("npm start", () => {
  it("serves a working platform that qrctl administers with no flags, and stops on SIGTERM", async () => {
    const platform = await startPlatformProcess(dataDir, {}, "sources");
    const { apiUrl } = platform;
    try {
      expect(apiUrl, platform.output()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
      expect(platform.output()).toContain("npx qrctl accounts create");

      const { accountId, key } = await accountWithKey(dataDir, "sources");
      const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const me = await fetch(`${apiUrl}/account`, { headers });
      expect(await me.json()).toMatchObject({ id: accountId, name: "Acme", subscription_tier: "origin" });

      const workspace = (await (
        await fetch(`${apiUrl}/workspaces`, { method: "POST", headers, body: JSON.stringify({ name: "Menus" }) })
      ).json()) as {
        id: string;
      };
      const created = await fetch(`${apiUrl}/workspaces/${workspace.id}/qr-codes`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          name: "Table 4",
          destination_url: "https://example.com/menu",
          utm: { source: "table" },
        }),
      });
      expect(created.status).toBe(201);
      const code = (await created.json()) as { vanity_url: string };
      const redirect = await fetch(code.vanity_url, { redirect: "manual" });
      expect(redirect.status).toBe(302);
      expect(redirect.headers.get("location")).toBe("https://example.com/menu?utm_source=table");
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- npm start printed:\n${platform.output()}`, { cause: error });
    } finally {
      expect(await platform.stop()).toBe(0);
    }
  }, 120_000);
});
