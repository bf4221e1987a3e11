import { describe, expect, it } from "vitest";
import { Backoff, backoffDelay } from "../src/backoff.js";

const settings = { baseMs: 100, maxMs: 1000 };

describe("backoff", () => {
  it("doubles per attempt up to the cap, jittered within the upper half", () => {
    expect([1, 2, 3, 4, 5, 10].map((attempt) => backoffDelay(attempt, settings, () => 1))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    expect([1, 2, 3, 4, 5].map((attempt) => backoffDelay(attempt, settings, () => 0))).toEqual([
      50, 100, 200, 400, 500,
    ]);
    expect(backoffDelay(1000, settings, () => 0.5)).toBe(750);
  });

  it("starts over after a success", () => {
    const backoff = new Backoff({ baseMs: 100, maxMs: 100_000 });
    const first = backoff.next();
    backoff.next();
    const third = backoff.next();
    expect(backoff.attempt).toBe(3);
    expect(third).toBeGreaterThanOrEqual(200);
    expect(first).toBeLessThanOrEqual(100);
    backoff.reset();
    expect(backoff.attempt).toBe(0);
    expect(backoff.next()).toBeLessThanOrEqual(100);
  });
});
