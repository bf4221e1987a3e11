// Safe retries through a restart of `npm start`: a create answered before the platform stopped is
// replayed, not run again, when its retry reaches the restarted platform (keys live in its database).
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { accountWithKey, startPlatformProcess, type PlatformProcess } from "@qrplatform/testing/platform-process";

const dataDir = mkdtempSync(join(tmpdir(), "qrp-idempotency-restart-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("Idempotency-Key across a restart", () => {
  it("replays a create after the platform restarted, and still refuses the key for another body", async () => {
    let platform: PlatformProcess = await startPlatformProcess(dataDir);
    try {
      const { key } = await accountWithKey(dataDir);
      const idempotencyKey = randomUUID();
      const create = async (name: string) => {
        const res = await fetch(`${platform.apiUrl}/workspaces`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${key}`,
            "content-type": "application/json",
            "idempotency-key": idempotencyKey,
          },
          body: JSON.stringify({ name }),
        });
        return {
          status: res.status,
          replayed: res.headers.get("idempotent-replayed"),
          location: res.headers.get("location"),
          body: await res.text(),
        };
      };

      const first = await create("Before the restart");
      expect(first.status).toBe(201);
      expect(await platform.stop()).toBe(0);

      platform = await startPlatformProcess(dataDir);
      const retry = await create("Before the restart");
      expect(retry).toEqual({ ...first, replayed: "true" });
      expect((await create("Another name")).status).toBe(422);
      const listed = await fetch(`${platform.apiUrl}/workspaces`, { headers: { authorization: `Bearer ${key}` } });
      expect(((await listed.json()) as { data: unknown[] }).data).toHaveLength(1);
    } finally {
      await platform.stop();
    }
  }, 120_000);
});
