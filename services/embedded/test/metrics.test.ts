// `npm start` serves one /metrics for the whole platform: every service's series, the in-process RPCs
// and the edge's, in one registry on one port.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { TenancyAdminService } from "@qrplatform/api/tenancy";
import { createScratchDatabase, type ScratchDatabase } from "@qrplatform/db/testing";
import { createLogger, remoteTransport } from "@qrplatform/platform";
import { scrapeMetrics } from "@qrplatform/platform/testing";
import { checkMetricsMove } from "../../edge/test/support/metrics-exercise.js";
import { startPlatform, type Platform } from "../src/platform.js";

describe("metrics of the embedded platform", () => {
  let dataDir: string;
  let scratch: ScratchDatabase | undefined;
  let platform: Platform;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "qrp-embedded-metrics-"));
    scratch = await createScratchDatabase();
    platform = await startPlatform({
      dataDir,
      databaseUrl: scratch?.url,
      host: "127.0.0.1",
      port: 0,
      grpcHost: "127.0.0.1",
      grpcPort: 0,
      metricsPort: 0,
      logger: createLogger({ service: "test", level: "silent" }),
    });
  }, 60_000);
  afterAll(async () => {
    await platform?.close();
    rmSync(dataDir, { recursive: true, force: true });
    await scratch?.drop();
  });

  it("serves every named series on one port, and they move with requests", async () => {
    expect(platform.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const credential = JSON.parse(readFileSync(platform.adminCredentialPath, "utf8")) as { address: string; token: string };
    const admin = createClient(TenancyAdminService, remoteTransport({ baseUrl: credential.address, token: credential.token }));
    await checkMetricsMove({ apiUrl: platform.apiUrl, admin, scrape: () => scrapeMetrics(platform.metricsUrl!) });
  }, 60_000);

  it("answers 404 outside /metrics", async () => {
    expect((await fetch(platform.metricsUrl!.replace(/\/metrics$/, "/"))).status).toBe(404);
  });
});
