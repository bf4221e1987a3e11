// Webhooks through a SIGKILL of `npm start`: changes made (QR codes created, changed and deleted,
// scans stored) while the receiver refuses every delivery are all delivered after the restart, each
// event once after deduplication by webhook-id, because each was committed with its change.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it } from "vitest";
import { createScratchDatabase } from "@qrplatform/db/testing";
import {
  accountWithKey,
  apiCaller,
  startPlatformProcess,
  type PlatformProcess,
} from "@qrplatform/testing/platform-process";

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
const ENV = {
  WEBHOOK_ALLOW_LOOPBACK: "true",
  WEBHOOK_POLL_SECONDS: "0.1",
  WEBHOOK_RETRY_SCHEDULE_SECONDS: Array(20).fill("0.3").join(","),
  WEBHOOK_SCAN_PERIOD_SECONDS: "1",
};
const dataDir = mkdtempSync(join(tmpdir(), "qrp-webhooks-kill-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("webhooks across a SIGKILL of npm start", () => {
  it("delivers every change committed before the kill, once each after deduplication", async () => {
    const scratch = await createScratchDatabase();
    const env = scratch ? { ...ENV, DATABASE_URL: scratch.url } : ENV;
    let accepting = false;
    const received = new Map<string, { type: string; data: Record<string, unknown> }>();
    let secret = "";
    const receiver: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        if (!accepting) return void res.writeHead(503).end();
        const body = Buffer.concat(chunks).toString("utf8");
        const event = new Webhook(secret).verify(body, req.headers as Record<string, string>) as {
          type: string;
          data: Record<string, unknown>;
        };
        received.set(String(req.headers["webhook-id"]), event);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    let platform: PlatformProcess = await startPlatformProcess(dataDir, env);
    try {
      const { key } = await accountWithKey(dataDir);
      const api = apiCaller(() => platform.apiUrl, key);
      const port = (receiver.address() as AddressInfo).port;
      ({ secret } = await api("POST", "/webhooks", {
        url: `http://127.0.0.1:${port}/hook`,
        event_types: ["qr_code.created", "qr_code.updated", "qr_code.deleted", "qr_code.scanned"],
      }));
      const workspace = await api("POST", "/workspaces", { name: `Kill ${randomBytes(3).toString("hex")}` });
      const codes: { id: string; vanity_url: string }[] = [];
      for (let i = 0; i < 4; i++)
        codes.push(
          await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
            name: `C${i}`,
            destination_url: "https://example.com",
          }),
        );
      for (const code of codes.slice(1)) await api("PATCH", `/qr-codes/${code.id}`, { name: "renamed" });
      await api("DELETE", `/qr-codes/${codes[3]!.id}`);
      const scanned = codes[0]!;
      for (let i = 0; i < 3; i++)
        await fetch(scanned.vanity_url, { redirect: "manual", headers: { "user-agent": IPHONE } });
      // Stored (not yet necessarily folded, relayed or delivered): what a kill must not lose.
      for (let tries = 0; (await api("GET", `/qr-codes/${scanned.id}`)).total_scans < 3; tries++) {
        expect(tries).toBeLessThan(100);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await platform.kill();

      accepting = true;
      platform = await startPlatformProcess(dataDir, env);
      const expected = { "qr_code.created": 4, "qr_code.updated": 3, "qr_code.deleted": 1 };
      const counts = () => {
        const byType: Record<string, number> = {};
        for (const event of received.values()) byType[event.type] = (byType[event.type] ?? 0) + 1;
        return byType;
      };
      const scans = () =>
        [...received.values()]
          .filter((e) => e.type === "qr_code.scanned")
          .reduce((sum, e) => sum + Number(e.data.scans), 0);
      for (
        let tries = 0;
        !(
          counts()["qr_code.created"] === 4 &&
          counts()["qr_code.updated"] === 3 &&
          counts()["qr_code.deleted"] === 1 &&
          scans() === 3
        );
        tries++
      ) {
        if (tries > 300) throw new Error(`not every event arrived: ${JSON.stringify(counts())}, ${scans()} scans`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // Nothing more comes: no event was made twice.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(counts()).toEqual({ ...expected, "qr_code.scanned": counts()["qr_code.scanned"] });
      expect(scans()).toBe(3);
    } finally {
      await platform.stop();
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
      await scratch?.drop();
    }
  }, 180_000);
});
