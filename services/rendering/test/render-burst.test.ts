// One account's burst of large exports through the RenderingService: another account's export is
// drawn in its turn, long before the burst is through, and this thread (which answers requests) does
// almost none of the work.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { ImageFormat, RenderingService } from "@qrplatform/api/rendering";
import { createLogger, inProcessTransport } from "@qrplatform/platform";
import { buildRendering } from "../src/server.js";
import { credentials } from "@qrplatform/testing";

const logger = createLogger({ service: "test", level: "silent" });
const BURST = 100;

const rendering = await buildRendering({ concurrency: 2, concurrencyPerAccount: 2, queuedPerAccount: BURST });
afterAll(() => rendering.renderer.close());
const client = createClient(
  RenderingService,
  inProcessTransport({ modules: [rendering], credentials, logger, token: credentials.serviceToken }),
);

/** CPU time in microseconds, of this thread and of the whole process (every thread). */
const cpu = () => {
  const thread = process.threadCpuUsage();
  const all = process.cpuUsage();
  return { thread: thread.user + thread.system, all: all.user + all.system };
};

describe("a burst of large exports from one account", () => {
  it("lets another account's export through in its turn, with the image work off this thread", async () => {
    const [accountA, accountB] = [randomUUID(), randomUUID()];
    // Start the pool's threads first, so their start-up is not counted below.
    await client.renderQrCode({ content: "https://qr.example/warm", size: 128, accountId: randomUUID() });
    const before = cpu();
    const finished: string[] = [];
    // All different (content and size), so the cache cannot help; 2048 to 2147 px.
    const burst = Array.from({ length: BURST }, (_, i) =>
      client
        .renderQrCode({
          content: `https://qr.example/a${i}`,
          size: 2048 + i,
          format: ImageFormat.PNG,
          accountId: accountA,
        })
        .then((res) => {
          finished.push(`a${i}`);
          return res;
        }),
    );
    const other = client
      .renderQrCode({ content: "https://qr.example/b", size: 2048, format: ImageFormat.PNG, accountId: accountB })
      .then((res) => {
        finished.push("b");
        return res;
      });

    // While the burst runs, this thread still answers: the next turn of its event loop comes before the burst is half done.
    const nextTurnAfter = await new Promise<number>((resolve) => setImmediate(() => resolve(finished.length)));
    expect(nextTurnAfter).toBeLessThan(BURST / 2);

    const results = await Promise.all([...burst, other]);
    const used = { thread: cpu().thread - before.thread, all: cpu().all - before.all };
    expect(results.every((r) => r.contentType === "image/png" && r.image.length > 0)).toBe(true);
    expect(rendering.renderer.renders).toBe(BURST + 2);
    // B waited for one of A's two running renders at most, then went before A's 98 queued ones.
    expect(finished.indexOf("b")).toBeLessThan(4);
    // Drawing happens on the pool's threads: this thread only schedules, queues and answers.
    expect(used.thread / used.all).toBeLessThan(0.1);
  }, 180_000);
});
