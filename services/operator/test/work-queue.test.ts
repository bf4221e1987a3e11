import { afterEach, describe, expect, it } from "vitest";
import { createLogger, Metrics, type Logger } from "@qrplatform/platform";
import { WorkQueue, type WorkQueueOptions } from "../src/kube/work-queue.js";

/** A logger that keeps its lines. */
function recordingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    service: "test",
    level: "debug",
    destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  });
  return { logger, lines };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

const queues: WorkQueue[] = [];

function queue(process: WorkQueueOptions["process"], logger = recordingLogger().logger, metrics = new Metrics()) {
  const made = new WorkQueue({ process, backoff: { baseMs: 5, maxMs: 40 }, workers: 3, logger, metrics });
  queues.push(made);
  return made;
}

afterEach(async () => {
  await Promise.all(queues.splice(0).map((made) => made.close()));
});

describe("the work queue", () => {
  it("processes a key added many times while waiting once", async () => {
    const seen: string[] = [];
    const made = queue(async (key) => void seen.push(key));
    for (let i = 0; i < 5; i += 1) made.add("a");
    made.add("b");
    expect(made.depth).toBe(2);
    made.start();
    await expect.poll(() => seen.length).toBe(2);
    expect(seen.sort()).toEqual(["a", "b"]);
    expect(made.depth).toBe(0);
  });

  it("processes a key added while it is in flight again afterwards, never twice at once", async () => {
    const gate = deferred();
    let running = 0;
    let most = 0;
    let runs = 0;
    const made = queue(async () => {
      running += 1;
      most = Math.max(most, running);
      runs += 1;
      if (runs === 1) await gate.promise;
      running -= 1;
    });
    made.start();
    made.add("a");
    await expect.poll(() => runs).toBe(1);
    made.add("a");
    made.add("a");
    gate.resolve();
    await expect.poll(() => runs).toBe(2);
    expect(most).toBe(1);
  });

  it("retries a failing key with growing backoff, logging key and attempt, and starts over after a success", async () => {
    const { logger, lines } = recordingLogger();
    const metrics = new Metrics();
    let calls = 0;
    const made = new WorkQueue({
      process: async () => {
        calls += 1;
        if (calls <= 3 || calls === 5) throw new Error(`boom ${calls}`);
      },
      backoff: { baseMs: 5, maxMs: 40 },
      workers: 1,
      logger,
      metrics,
    });
    queues.push(made);
    made.start();
    made.add("go.example.com");
    await expect.poll(() => calls).toBe(4);
    const failures = lines.filter((line) => line.msg === "reconcile failed; retrying with backoff");
    expect(failures.map((line) => [line.queueKey, line.attempt])).toEqual([
      ["go.example.com", 1],
      ["go.example.com", 2],
      ["go.example.com", 3],
    ]);
    expect((failures[0]!.err as { message: string }).message).toBe("boom 1");
    expect(failures.map((line) => line.retryInMs as number)[2]).toBeGreaterThanOrEqual(10);
    made.add("go.example.com");
    await expect.poll(() => calls).toBe(6);
    const afterSuccess = lines.filter((line) => line.msg === "reconcile failed; retrying with backoff").at(-1);
    expect(afterSuccess?.attempt).toBe(1);
  });

  it("looks at a key again when processing asks for it", async () => {
    let calls = 0;
    const made = queue(async () => {
      calls += 1;
      return calls === 1 ? { requeueAfterMs: 5 } : undefined;
    });
    made.start();
    made.add("a");
    await expect.poll(() => calls).toBe(2);
  });

  it("keeps waiting keys across a stop and processes them on the next start", async () => {
    const seen: string[] = [];
    const made = queue(async (key) => void seen.push(key));
    made.start();
    await made.stop();
    made.add("a");
    made.add("b");
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([]);
    made.start();
    await expect.poll(() => seen.length).toBe(2);
  });

  it("serves its depth as a gauge", async () => {
    const metrics = new Metrics();
    const made = queue(async () => undefined, undefined, metrics);
    made.add("a");
    made.add("b");
    expect(await metrics.text()).toMatch(/^qrp_operator_queue_depth 2$/m);
  });
});
