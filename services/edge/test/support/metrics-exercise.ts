// What both shapes' metrics tests do: scrape every process, make one request of each kind the metrics
// describe (an API call, a 404, a create, an export twice, a scan, a refused request), scrape again,
// and check the named series are there and moved. The scrapes are parsed by a Prometheus parser.
import { expect } from "vitest";
import type { Client } from "@connectrpc/connect";
import { SubscriptionTier, type TenancyAdminService } from "@qrplatform/api/tenancy";
import type { Scrape } from "@qrplatform/testing";
import { call } from "./http.js";
import type { ProcessName } from "./stack.js";

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
const HOURLY_LIMIT = 8;
const PROCESSES: ProcessName[] = ["tenancy", "catalog", "links", "rendering", "edge"];

type Scrapes = Record<ProcessName, Scrape>;

async function scrapeAll(scrape: (process: ProcessName) => Promise<Scrape>): Promise<Scrapes> {
  return Object.fromEntries(
    await Promise.all(PROCESSES.map(async (name) => [name, await scrape(name)] as const)),
  ) as Scrapes;
}

/**
 * Exercises the platform at `apiUrl` and checks each process's metrics: `scrape` reads the process's
 * `/metrics` (in the embedded platform every name reads the one endpoint).
 */
export async function checkMetricsMove(options: {
  apiUrl: string;
  admin: Client<typeof TenancyAdminService>;
  scrape: (process: ProcessName) => Promise<Scrape>;
}): Promise<void> {
  const { apiUrl, admin, scrape } = options;
  const { account } = await admin.createAccount({ name: "Metrics", subscriptionTier: SubscriptionTier.ORIGIN });
  await admin.updateAccount({ accountId: account!.id, hourlyRequestLimitOverride: BigInt(HOURLY_LIMIT) });
  const { secret: key } = await admin.createApiKey({ accountId: account!.id });
  const before = await scrapeAll(scrape);

  expect((await call(apiUrl, "GET", "/account", { key })).status).toBe(200);
  expect((await call(apiUrl, "GET", `/no-such-route/${account!.id}`, { key })).status).toBe(404);
  const workspace = await call(apiUrl, "POST", "/workspaces", { key, body: { name: "Metrics" } });
  expect(workspace.status).toBe(201);
  const code = await call(apiUrl, "POST", `/workspaces/${workspace.body.id}/qr-codes`, {
    key,
    body: { name: "Menu", destination_url: "https://example.com/menu" },
  });
  expect(code.status).toBe(201);
  // The same image twice: drawn once (a miss), then served from rendering's cache (a hit). The second
  // is a revalidation with an old tag, which the edge always leaves to rendering (a plain repeat the
  // edge answers from its own copy of the image, without a call).
  const exportPath = `/qr-codes/${code.body.id}/export?format=svg&size=300`;
  expect((await call(apiUrl, "GET", exportPath, { key })).status).toBe(200);
  expect(
    (await call(apiUrl, "GET", exportPath, { key, headers: { "if-none-match": '"an-older-image"' } })).status,
  ).toBe(200);
  const scan = await fetch(code.body.vanity_url, { redirect: "manual", headers: { "user-agent": IPHONE } });
  expect(scan.status).toBe(302);
  // Until the key's hour is used up: the next request is refused.
  let refused = false;
  for (let i = 0; i <= HOURLY_LIMIT && !refused; i++)
    refused = (await call(apiUrl, "GET", "/account", { key })).status === 429;
  expect(refused).toBe(true);

  // Scans are stored in batches off the request path: wait for this one.
  const storedBefore = before.links.value("qrp_scans_stored_total");
  const deadline = Date.now() + 15_000;
  while ((await scrape("links")).value("qrp_scans_stored_total") <= storedBefore && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  const after = await scrapeAll(scrape);
  const moved = (process: ProcessName, name: string, labels?: Record<string, string>) =>
    after[process].value(name, labels) - before[process].value(name, labels);

  // Every process: Node's runtime metrics under prom-client's standard names.
  for (const process of PROCESSES) {
    for (const name of [
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "nodejs_eventloop_lag_p99_seconds",
      "nodejs_heap_size_used_bytes",
      "nodejs_gc_duration_seconds",
    ]) {
      expect(after[process].names, `${process} ${name}`).toContain(name);
    }
  }

  // The edge: requests by route template, quota decisions.
  const duration = "http_server_request_duration_seconds";
  expect(
    moved("edge", duration, { method: "GET", route: "/api/v1/account", status_code: "200" }),
  ).toBeGreaterThanOrEqual(1);
  expect(
    moved("edge", duration, { method: "GET", route: "/api/v1/account", status_code: "429" }),
  ).toBeGreaterThanOrEqual(1);
  expect(
    moved("edge", duration, { method: "POST", route: "/api/v1/workspaces/:workspace_id/qr-codes", status_code: "201" }),
  ).toBe(1);
  expect(moved("edge", duration, { route: "unmatched", status_code: "404" })).toBeGreaterThanOrEqual(1);
  // Short links are the redirector's to count (the embedded edge serves them too), not API requests.
  expect(after.edge.value(duration, { status_code: "302" })).toBe(0);
  // No label holds an id or a raw path.
  const routes = after.edge.labelSets(duration).map((labels) => labels.route);
  expect(
    routes.filter(
      (route) => route?.includes(account!.id) || route?.includes(workspace.body.id) || route?.includes("no-such-route"),
    ),
  ).toEqual([]);
  expect(moved("edge", "qrp_quota_decisions_total", { decision: "admitted" })).toBeGreaterThanOrEqual(HOURLY_LIMIT - 1);
  expect(moved("edge", "qrp_quota_decisions_total", { decision: "refused" })).toBe(1);

  // Every RPC by service, method and code.
  const handled = "grpc_server_handled_total";
  expect(
    moved("tenancy", handled, {
      grpc_service: "qrplatform.tenancy.v1.TenancyService",
      grpc_method: "AuthenticateApiKey",
      grpc_code: "OK",
    }),
  ).toBeGreaterThanOrEqual(1);
  expect(
    moved("catalog", handled, {
      grpc_service: "qrplatform.catalog.v1.QrCodeService",
      grpc_method: "CreateQrCode",
      grpc_code: "OK",
    }),
  ).toBe(1);
  expect(
    moved("catalog", "grpc_server_handling_seconds", {
      grpc_service: "qrplatform.catalog.v1.QrCodeService",
      grpc_method: "CreateQrCode",
    }),
  ).toBe(1);
  // The redirect's lookup is an RPC; its scan is stored in the links process without one (qrp_scans_stored_total below).
  expect(
    moved("links", handled, {
      grpc_service: "qrplatform.links.v1.RedirectService",
      grpc_method: "ResolveRedirect",
      grpc_code: "OK",
    }),
  ).toBeGreaterThanOrEqual(1);
  expect(after.catalog.names).toContain("qrp_reconcile_passes_total");
  expect(after.catalog.names).toContain("qrp_reconcile_repairs_total");

  // Redirects by outcome; scans on their way to the database.
  expect(moved("links", "qrp_redirects_total", { outcome: "redirected" })).toBe(1);
  expect(moved("links", "qrp_redirect_duration_seconds")).toBeGreaterThanOrEqual(1);
  expect(moved("links", "qrp_scans_stored_total")).toBeGreaterThanOrEqual(1);
  for (const name of ["qrp_scans_buffered", "qrp_scans_spooled", "qrp_scan_oldest_unstored_age_seconds"])
    expect(after.links.names).toContain(name);

  // The render cache: the first export drawn, the second served from the cache.
  expect(moved("rendering", "qrp_render_cache_total", { result: "miss" })).toBeGreaterThanOrEqual(1);
  expect(moved("rendering", "qrp_render_cache_total", { result: "hit" })).toBeGreaterThanOrEqual(1);

  // The database pool, where there is one (Postgres; PGlite has none).
  if (process.env.DATABASE_URL) {
    for (const process of ["tenancy", "catalog", "links"] as const) {
      expect(
        after[process]
          .labelSets("qrp_db_pool_connections")
          .map((labels) => labels.state)
          .sort(),
      ).toEqual(["busy", "idle", "waiting"]);
      expect(
        after[process].value("qrp_db_pool_connections", { state: "idle" }) +
          after[process].value("qrp_db_pool_connections", { state: "busy" }),
      ).toBeGreaterThanOrEqual(1);
    }
  }
}
