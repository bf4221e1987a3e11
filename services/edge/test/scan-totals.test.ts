// The catalog keeps links' scan totals until the links service announces stored scans: a read right
// after scans are stored counts them, in one code and in a page, in both shapes; the processes shape
// runs the catalog and links on a Redis of their own, counts the calls to links, and stops Redis to show
// the bound on staleness while announcements cannot arrive.
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { RedirectService } from "@qrplatform/api/links";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { remoteTransport } from "@qrplatform/platform";
import { freePort, killRedis, scrapeMetrics, startRedis } from "@qrplatform/testing";
import { call } from "./support/http.js";
import { credentials, startStack, type Stack, type StackMode } from "./support/stack.js";

const SCAN_TOTALS = { grpc_service: "qrplatform.links.v1.AnalyticsService", grpc_method: "GetScanTotals" };

describe.each<StackMode>(["in-process", "processes"])("[%s] scan totals on reads", (mode) => {
  let stack: Stack;
  let redis: ChildProcess | undefined;

  beforeAll(async () => {
    let env = {};
    if (mode === "processes") {
      const port = await freePort();
      redis = await startRedis(port);
      const redisEnv = { REDIS_URL: `redis://127.0.0.1:${port}` };
      env = { env: { links: redisEnv, catalog: redisEnv } };
    }
    stack = await startStack(mode, env);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    if (redis) await killRedis(redis);
  });

  /** Stores scans of a link as a redirector does, and waits for the answer. */
  async function recordScans(linkId: string, count: number) {
    const transport =
      mode === "processes"
        ? remoteTransport({ baseUrl: stack.grpcUrls!.links, token: credentials.serviceToken })
        : stack.grpcModules!.find(({ module }) => module.services.some((s) => s.typeName === RedirectService.typeName))!
            .transport;
    const scans = Array.from({ length: count }, () => ({
      id: randomUUID(),
      linkId,
      scanTime: timestampNow(),
      deviceType: "mobile",
      visitorKey: "v1",
    }));
    expect((await createClient(RedirectService, transport).recordScans({ scans })).recordedCount).toBe(count);
  }

  async function newCode() {
    const { account } = await stack.admin.createAccount({ name: "Totals", subscriptionTier: SubscriptionTier.ORIGIN });
    const { secret: key } = await stack.admin.createApiKey({ accountId: account!.id });
    const workspace = await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Totals" } });
    const created = await call(stack.baseUrl, "POST", `/workspaces/${workspace.body.id}/qr-codes`, {
      key,
      body: { name: "Menu", destination_url: "https://example.com/menu" },
    });
    expect(created.status).toBe(201);
    const { qrCode } = await stack.catalog.getQrCode({ accountId: account!.id, qrCodeId: created.body.id });
    return { key, id: created.body.id as string, linkId: qrCode!.linkId };
  }
  const totals = async (key: string, id: string) => {
    const [one, page] = await Promise.all([
      call(stack.baseUrl, "GET", `/qr-codes/${id}`, { key }),
      call(stack.baseUrl, "GET", "/qr-codes", { key }),
    ]);
    return [one.body.total_scans, page.body.data.find((code: { id: string }) => code.id === id).total_scans];
  };

  it("counts scans on the read right after they are stored, in one code and in a page", async () => {
    const { key, id, linkId } = await newCode();
    expect(await totals(key, id)).toEqual([0, 0]);
    await recordScans(linkId, 3);
    expect(await totals(key, id)).toEqual([3, 3]);
    await recordScans(linkId, 2);
    expect(await totals(key, id)).toEqual([5, 5]);
  });

  if (mode === "processes") {
    it("asks links for a code's total once while none of its scans is stored", async () => {
      const asked = async () =>
        (await scrapeMetrics(stack.metricsUrls!.links)).value("grpc_server_handled_total", SCAN_TOTALS);
      const before = await asked();
      // Reading the new code's link id (through the catalog) is the first read of its total.
      const { key, id, linkId } = await newCode();
      for (let i = 0; i < 3; i++) expect(await totals(key, id)).toEqual([0, 0]);
      expect((await asked()) - before).toBe(1);
      await recordScans(linkId, 1);
      for (let i = 0; i < 3; i++) expect(await totals(key, id)).toEqual([1, 1]);
      expect((await asked()) - before).toBe(2);
    });

    it("keeps no total longer than a second while Redis is away", async () => {
      const { key, id, linkId } = await newCode();
      expect(await totals(key, id)).toEqual([0, 0]);
      await killRedis(redis!);
      await recordScans(linkId, 1);
      const storedAt = Date.now();
      let total = 0;
      while (total === 0 && Date.now() - storedAt < 5000) {
        total = (await call(stack.baseUrl, "GET", `/qr-codes/${id}`, { key })).body.total_scans;
        if (total === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(total).toBe(1);
      // The bus notices a silent Redis within a second, and an unconfirmed total lives a second more.
      expect(Date.now() - storedAt).toBeLessThan(2500);
    });
  }
});
