// The promise of scan recording: a scan answered with a redirect is counted exactly once, even when
// the platform is stopped (SIGTERM) right after it and started again; killed (SIGKILL) in the middle
// of a load, it loses at most the scans of its last flush interval and counts none twice. Both ways
// of recording keep it: on the answering thread (`npm start`'s default) and on a thread of its own.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, settledCount } from "@qrplatform/testing";
import { accountWithKey, startPlatformProcess } from "@qrplatform/testing/platform-process";

const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
const PIXEL =
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36";

const follow = (url: string, method: string, userAgent: string) =>
  fetch(url, { method, redirect: "manual", headers: { "user-agent": userAgent } });

describe.each([
  { recording: "on the answering thread", SCAN_RECORDING_THREAD: "false" },
  { recording: "on a thread of its own", SCAN_RECORDING_THREAD: "true" },
])("scans across a restart, recorded $recording", ({ SCAN_RECORDING_THREAD }) => {
  it("counts 100 follows exactly when the platform restarts in the middle (HEADs and bots are not scans), and loses at most a flush interval when killed mid-load", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "qrp-scans-restart-"));
    dataDirs.push(dataDir);
    // The short links printed on codes name the port, so both runs must share it.
    const env = { PORT: String(await freePort()), SCAN_RECORDING_THREAD };
    let platform = await startPlatformProcess(dataDir, env);
    const { key } = await accountWithKey(dataDir);
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const api = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(`${platform.apiUrl}${path}`, { ...init, headers });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    const workspace = await api("/workspaces", { method: "POST", body: JSON.stringify({ name: "Menus" }) });
    const code = await api(`/workspaces/${workspace.body.id}/qr-codes`, {
      method: "POST",
      body: JSON.stringify({ name: "Table 4", destination_url: "https://example.com/menu" }),
    });
    expect(code.status).toBe(201);
    const { id, vanity_url: vanityUrl } = code.body as { id: string; vanity_url: string };

    try {
      for (let i = 0; i < 50; i++) expect((await follow(vanityUrl, "GET", IPHONE)).status).toBe(302);
      for (let i = 0; i < 3; i++) expect((await follow(vanityUrl, "HEAD", IPHONE)).status).toBe(302);
      expect(
        (await follow(vanityUrl, "GET", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)")).status,
      ).toBe(302);
      // Stopped at once: the last scans are still in the buffer, and SIGTERM must store them.
      expect(await platform.stop()).toBe(0);

      platform = await startPlatformProcess(dataDir, env);
      for (let i = 0; i < 50; i++) expect((await follow(vanityUrl, "GET", PIXEL)).status).toBe(302);
      expect((await follow(vanityUrl, "GET", "facebookexternalhit/1.1")).status).toBe(302);

      expect(await settledCount(async () => (await api(`/qr-codes/${id}`)).body.total_scans as number, 100)).toBe(100);
      const analytics = await api(`/qr-codes/${id}/analytics`);
      expect(analytics.body).toMatchObject({
        total_scans: 100,
        unique_scans: 2,
        operating_systems: [
          { value: "Android", scans: 50 },
          { value: "iOS", scans: 50 },
        ],
      });

      // Killed mid-load: follows keep coming, 8 at a time, and the kill lands between them.
      const answeredAt: number[] = [];
      let killedAt = 0;
      let killing: Promise<unknown> | undefined;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (killing === undefined) {
            const res = await follow(vanityUrl, "GET", IPHONE).catch(() => undefined);
            if (res?.status !== 302) continue;
            answeredAt.push(performance.now());
            if (answeredAt.length === 200 && killing === undefined) {
              killedAt = performance.now();
              killing = platform.kill();
            }
          }
        }),
      );
      expect(await killing).toBe("SIGKILL");
      platform = await startPlatformProcess(dataDir, env);
      const total = async () => (await api(`/qr-codes/${id}`)).body.total_scans as number;
      const afterKill = await settledCount(total, 100 + answeredAt.length);
      // Never counted twice; lost at most what was answered in the last flush interval (250 ms, and a timer's slack).
      expect(afterKill).toBeLessThanOrEqual(100 + answeredAt.length);
      expect(afterKill).toBeGreaterThanOrEqual(100 + answeredAt.filter((at) => at < killedAt - 250 - 750).length);
      // Every stored scan is in each breakdown and in the daily series once, whatever the kill caught half-folded.
      const afterwards = (await api(`/qr-codes/${id}/analytics`)).body as {
        total_scans: number;
        daily: { scans: number }[];
        operating_systems: { scans: number }[];
        devices: { scans: number }[];
      };
      const sum = (entries: { scans: number }[]) => entries.reduce((total, entry) => total + entry.scans, 0);
      expect([
        afterwards.total_scans,
        sum(afterwards.daily),
        sum(afterwards.operating_systems),
        sum(afterwards.devices),
      ]).toEqual(Array(4).fill(afterKill));
    } finally {
      await platform.stop();
    }
  }, 180_000);
});
