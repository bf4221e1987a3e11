// `npm start` serves one /metrics for the whole platform: every service's series, the in-process RPCs
// and the edge's, in one registry on one port.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scrapeMetrics } from "@qrplatform/testing";
import { checkMetricsMove } from "@qrplatform/edge/testing";
import { startScratchPlatform, type ScratchPlatform } from "./support/scratch-platform.js";

describe("metrics of the embedded platform", () => {
  let platform: ScratchPlatform;

  beforeAll(async () => {
    platform = await startScratchPlatform();
  }, 60_000);
  afterAll(() => platform?.close());

  it("serves every named series on one port, and they move with requests", async () => {
    expect(platform.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    await checkMetricsMove({
      apiUrl: platform.apiUrl,
      admin: platform.admin,
      scrape: () => scrapeMetrics(platform.metricsUrl!),
    });
  }, 60_000);

  it("answers 404 outside /metrics", async () => {
    expect((await fetch(platform.metricsUrl!.replace(/\/metrics$/, "/"))).status).toBe(404);
  });
});
