import { describe, expect, it } from "vitest";
import { PeriodicPass } from "../src/periodic-pass.js";

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await settle(10);
  expect(condition()).toBe(true);
}

describe("PeriodicPass", () => {
  it("runs the first pass at once and never two at a time, however slow a pass is", async () => {
    let running = 0;
    let mostAtOnce = 0;
    let passes = 0;
    const job = new PeriodicPass(
      async () => {
        running++;
        mostAtOnce = Math.max(mostAtOnce, running);
        await settle(20);
        running--;
        passes++;
      },
      1,
      () => {},
    );
    job.start();
    job.start();
    await until(() => passes >= 5);
    await job.stop();
    expect(mostAtOnce).toBe(1);
  });

  it("hands a failed pass to onError and goes on with the next", async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const job = new PeriodicPass(
      async () => {
        calls++;
        if (calls <= 2) throw new Error(`pass ${calls} failed`);
      },
      1,
      (error) => errors.push(error),
    );
    job.start();
    await until(() => calls >= 4);
    await job.stop();
    expect(errors.map((error) => (error as Error).message)).toEqual(["pass 1 failed", "pass 2 failed"]);
  });

  it("stop waits for the pass under way, and no pass starts after it", async () => {
    let finished = false;
    let started = 0;
    const job = new PeriodicPass(
      async () => {
        started++;
        await settle(50);
        finished = true;
      },
      1,
      () => {},
    );
    job.start();
    expect(job.active).toBe(true);
    await until(() => started === 1);
    await job.stop();
    expect(finished).toBe(true);
    expect(job.active).toBe(false);
    await settle(30);
    expect(started).toBe(1);
  });
});
