// What a new user does after `npm start`: create an account and a key with qrctl (no flags), call the
// API with the key, create a QR code and follow its short link; then SIGTERM stops the process cleanly.
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const REPO_ROOT = resolve(import.meta.dirname, "../../..");
const dataDir = mkdtempSync(join(tmpdir(), "qrp-npm-start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Runs `qrctl` the way `npx qrctl` does, from the repository root, with the platform's DATA_DIR. */
function qrctl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [join(REPO_ROOT, "tools/qrctl/bin/qrctl.js"), ...args],
      { cwd: REPO_ROOT, env: { PATH: process.env.PATH, DATA_DIR: dataDir } },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("npm start", () => {
  it("serves a working platform that qrctl administers with no flags, and stops on SIGTERM", async () => {
    const env: Record<string, string> = { PATH: process.env.PATH ?? "", DATA_DIR: dataDir, PORT: "0", GRPC_PORT: "0", LOG_LEVEL: "warn" };
    if (process.env.DATABASE_URL) env.DATABASE_URL = process.env.DATABASE_URL;
    const platform = spawn(process.execPath, ["--import", "tsx", "services/embedded/src/main.ts"], { cwd: REPO_ROOT, env });
    let output = "";
    platform.stdout.on("data", (chunk) => (output += chunk));
    platform.stderr.on("data", (chunk) => (output += chunk));
    const exited = new Promise<number | null>((r) => platform.once("exit", (code) => r(code)));
    try {
      const deadline = Date.now() + 60_000;
      while (!/REST API\s+(\S+)/.test(output) && Date.now() < deadline && platform.exitCode === null) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const apiUrl = /REST API\s+(\S+)/.exec(output)?.[1];
      expect(apiUrl, output).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
      expect(output).toContain("npx qrctl accounts create");

      const account = await qrctl(["accounts", "create", "--name", "Acme", "--plan", "origin", "--json"]);
      expect(account.code, account.stderr).toBe(0);
      const { id: accountId } = JSON.parse(account.stdout) as { id: string };
      const key = await qrctl(["keys", "create", "--account", accountId, "--json"]);
      expect(key.code, key.stderr).toBe(0);
      const { key: secret } = JSON.parse(key.stdout) as { key: string };

      const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
      const me = await fetch(`${apiUrl}/account`, { headers });
      expect(await me.json()).toMatchObject({ id: accountId, name: "Acme", subscription_tier: "origin" });

      const workspace = (await (await fetch(`${apiUrl}/workspaces`, { method: "POST", headers, body: JSON.stringify({ name: "Menus" }) })).json()) as {
        id: string;
      };
      const created = await fetch(`${apiUrl}/workspaces/${workspace.id}/qr-codes`, {
        method: "POST",
        headers,
        body: JSON.stringify({ name: "Table 4", destination_url: "https://example.com/menu", utm: { source: "table" } }),
      });
      expect(created.status).toBe(201);
      const code = (await created.json()) as { vanity_url: string };
      const redirect = await fetch(code.vanity_url, { redirect: "manual" });
      expect(redirect.status).toBe(302);
      expect(redirect.headers.get("location")).toBe("https://example.com/menu?utm_source=table");
    } finally {
      platform.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  }, 120_000);
});
