// Every process of the separate-processes shape serves /metrics on its own METRICS_PORT; the named
// series are there and move as requests are made.
import { afterAll, beforeAll, describe, it } from "vitest";
import { scrapeMetrics } from "@qrplatform/testing";
import { checkMetricsMove } from "./support/metrics-exercise.js";
import { startStack, type Stack } from "./support/stack.js";

describe("metrics of every process (separate processes)", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack("processes");
  }, 120_000);
  afterAll(() => stack?.close());

  it("serves request, RPC, redirect, scan, quota, cache, pool and runtime metrics that move with requests", async () => {
    await checkMetricsMove({
      apiUrl: stack.baseUrl,
      admin: stack.admin,
      scrape: (process) => scrapeMetrics(stack.metricsUrls![process]),
    });
  }, 60_000);
});
