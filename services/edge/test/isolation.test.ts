// Cross-account isolation, route by route: a second account's key reaches none of the first account's
// resources, whether named in the path or referenced in a body, and leaves them byte-for-byte as they
// were. Every documented operation must appear here, so a new route cannot skip the suite.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { call, expectError, type ApiResponse } from "./support/http.js";
import { documentedOperations } from "./support/openapi.js";
import { startStack, type Stack } from "./support/stack.js";
import { newAccount as newTestAccount } from "./support/accounts.js";

interface Owner {
  accountId: string;
  key: string;
  workspaceId: string;
  qrCodeId: string;
  domainId: string;
  webhookId: string;
  deliveryId: string;
}

/** What each operation is, in this suite: reached with the owner's ids by a stranger, or not scoped to one resource. */
type Probe =
  | { kind: "path"; method: string; path: (o: Owner) => string; body?: unknown }
  | { kind: "list" }
  | { kind: "public" };

const PROBES: Record<string, Probe> = {
  getOpenApiDocument: { kind: "public" },
  getAccount: { kind: "list" },
  listWorkspaces: { kind: "list" },
  createWorkspace: { kind: "list" },
  listQrCodes: { kind: "list" },
  // Draws a design it is given and stores nothing: it names no resource of anyone's.
  previewQrCode: { kind: "list" },
  listDomains: { kind: "list" },
  listWebhookEndpoints: { kind: "list" },
  createWebhookEndpoint: { kind: "list" },
  getWebhookEndpoint: { kind: "path", method: "GET", path: (o) => `/webhooks/${o.webhookId}` },
  updateWebhookEndpoint: {
    kind: "path",
    method: "PATCH",
    path: (o) => `/webhooks/${o.webhookId}`,
    body: { url: "https://evil.example/hook" },
  },
  deleteWebhookEndpoint: { kind: "path", method: "DELETE", path: (o) => `/webhooks/${o.webhookId}` },
  rotateWebhookEndpointSecret: { kind: "path", method: "POST", path: (o) => `/webhooks/${o.webhookId}/rotate-secret` },
  listWebhookDeliveries: { kind: "path", method: "GET", path: (o) => `/webhooks/${o.webhookId}/deliveries` },
  getWebhookDelivery: {
    kind: "path",
    method: "GET",
    path: (o) => `/webhooks/${o.webhookId}/deliveries/${o.deliveryId}`,
  },
  getWorkspace: { kind: "path", method: "GET", path: (o) => `/workspaces/${o.workspaceId}` },
  updateWorkspace: {
    kind: "path",
    method: "PATCH",
    path: (o) => `/workspaces/${o.workspaceId}`,
    body: { name: "taken over" },
  },
  deleteWorkspace: { kind: "path", method: "DELETE", path: (o) => `/workspaces/${o.workspaceId}` },
  listWorkspaceQrCodes: { kind: "path", method: "GET", path: (o) => `/workspaces/${o.workspaceId}/qr-codes` },
  createQrCode: {
    kind: "path",
    method: "POST",
    path: (o) => `/workspaces/${o.workspaceId}/qr-codes`,
    body: { name: "planted", destination_url: "https://example.com" },
  },
  bulkCreateQrCodes: {
    kind: "path",
    method: "POST",
    path: (o) => `/workspaces/${o.workspaceId}/qr-codes/bulk`,
    body: { items: [{ name: "planted", destination_url: "https://example.com" }] },
  },
  exportWorkspaceQrCodes: {
    kind: "path",
    method: "GET",
    path: (o) => `/workspaces/${o.workspaceId}/qr-codes/export?format=svg&size=128`,
  },
  getQrCode: { kind: "path", method: "GET", path: (o) => `/qr-codes/${o.qrCodeId}` },
  updateQrCode: {
    kind: "path",
    method: "PATCH",
    path: (o) => `/qr-codes/${o.qrCodeId}`,
    body: {
      destination_url: "https://evil.example",
      status: "paused",
      rules: [{ destination_url: "https://evil.example/rule" }],
      expires_at: "2000-01-01T00:00:00Z",
      password: "let me in please",
    },
  },
  deleteQrCode: { kind: "path", method: "DELETE", path: (o) => `/qr-codes/${o.qrCodeId}` },
  getQrCodeAnalytics: {
    kind: "path",
    method: "GET",
    path: (o) => `/qr-codes/${o.qrCodeId}/analytics?from=2026-01-01&to=2026-01-31`,
  },
  resolveQrCode: {
    kind: "path",
    method: "GET",
    path: (o) => `/qr-codes/${o.qrCodeId}/resolve?country=JP&device=mobile&at=2026-12-01T09:00:00Z`,
  },
  exportQrCode: { kind: "path", method: "GET", path: (o) => `/qr-codes/${o.qrCodeId}/export?format=svg&size=256` },
};

describe("cross-account isolation", () => {
  let stack: Stack;
  let owner: Owner;
  let stranger: { accountId: string; key: string; workspaceId: string; qrCodeId: string };
  const api = (method: string, path: string, options?: Parameters<typeof call>[3]) =>
    call(stack.baseUrl, method, path, options);

  async function newAccount() {
    const { accountId, key: secret } = await newTestAccount(stack.admin, { name: "Iso", tier: SubscriptionTier.SCALE });
    const { body: workspace } = await api("POST", "/workspaces", { key: secret, body: { name: "Mine" } });
    const { body: code } = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
      key: secret,
      body: { name: "Mine", destination_url: "https://example.com/mine", tags: ["a"] },
    });
    return { accountId, key: secret, workspaceId: workspace.id as string, qrCodeId: code.id as string };
  }

  /** Everything the owner can read, as the exact bytes the API serves. */
  async function snapshot(): Promise<string[]> {
    const paths = [
      "/account",
      "/workspaces",
      `/workspaces/${owner.workspaceId}`,
      `/workspaces/${owner.workspaceId}/qr-codes`,
      "/qr-codes",
      `/qr-codes/${owner.qrCodeId}`,
      "/domains",
      "/webhooks",
      `/webhooks/${owner.webhookId}`,
      `/webhooks/${owner.webhookId}/deliveries`,
      `/webhooks/${owner.webhookId}/deliveries/${owner.deliveryId}`,
    ];
    const responses = await Promise.all(paths.map((path) => api("GET", path, { key: owner.key })));
    return responses.map((res, i) => `${paths[i]} ${res.status} ${JSON.stringify(res.body)}`);
  }

  beforeAll(async () => {
    stack = await startStack("in-process");
    const first = await newAccount();
    const { domain } = await stack.domains.createDomain({
      accountId: first.accountId,
      hostname: `iso-${randomBytes(4).toString("hex")}.example`,
    });
    stack.dns.setTxt(domain!.challengeRecordName, domain!.challengeRecordValue);
    await stack.domains.verifyDomain({ accountId: first.accountId, domainId: domain!.id });
    const { body: webhook } = await api("POST", "/webhooks", {
      key: first.key,
      body: { url: "https://93.184.215.14/hook", event_types: ["qr_code.created"] },
    });
    // A code made after the endpoint gives it a delivery (pending: no worker sends it here).
    await api("POST", `/workspaces/${first.workspaceId}/qr-codes`, {
      key: first.key,
      body: { name: "Delivered", destination_url: "https://example.com/d" },
    });
    const { body: deliveries } = await api("GET", `/webhooks/${webhook.id}/deliveries`, { key: first.key });
    owner = { ...first, domainId: domain!.id, webhookId: webhook.id, deliveryId: deliveries.data[0].id };
    stranger = await newAccount();
  }, 120_000);
  afterAll(() => stack?.close());

  it("covers every documented operation", () => {
    expect(
      documentedOperations()
        .map((o) => o.operation.operationId)
        .sort(),
    ).toEqual(Object.keys(PROBES).sort());
  });

  it("answers a stranger 404 for every route that names the owner's resource, and changes nothing", async () => {
    const before = await snapshot();
    for (const [operationId, probe] of Object.entries(PROBES)) {
      if (probe.kind !== "path") continue;
      const res = await api(probe.method, probe.path(owner), { key: stranger.key, body: probe.body });
      expect({ operationId, status: res.status, code: res.body?.error?.code }).toEqual({
        operationId,
        status: 404,
        code: "not_found",
      });
      expectError(res, 404, "not_found");
    }
    expect(await snapshot()).toEqual(before);
  });

  it("refuses references to the owner's workspace or domain inside a stranger's own requests", async () => {
    const before = await snapshot();
    const move = await api("PATCH", `/qr-codes/${stranger.qrCodeId}`, {
      key: stranger.key,
      body: { workspace_id: owner.workspaceId },
    });
    expectError(move, 404, "not_found");
    expect(move.body.error.details).toEqual({ resource: "workspace" });
    const vanity = await api("POST", `/workspaces/${stranger.workspaceId}/qr-codes`, {
      key: stranger.key,
      body: {
        name: "x",
        destination_url: "https://example.com",
        vanity_domain_id: owner.domainId,
        vanity_slug: "hijack",
      },
    });
    expectError(vanity, 404, "not_found");
    expect(vanity.body.error.details).toEqual({ resource: "domain" });
    const filtered = await api("GET", `/qr-codes?workspace_id=${owner.workspaceId}`, { key: stranger.key });
    expectError(filtered, 404, "not_found");
    expect(await snapshot()).toEqual(before);
    // The stranger's own code did not move either.
    expect((await api("GET", `/qr-codes/${stranger.qrCodeId}`, { key: stranger.key })).body.workspace_id).toBe(
      stranger.workspaceId,
    );
  });

  it("never lists the owner's resources to a stranger, and cursors do not cross accounts", async () => {
    const lists: ApiResponse[] = await Promise.all(
      ["/workspaces", "/qr-codes", "/domains", "/webhooks", `/workspaces/${stranger.workspaceId}/qr-codes`].map(
        (path) => api("GET", path, { key: stranger.key }),
      ),
    );
    const seen = JSON.stringify(lists.map((l) => l.body));
    for (const id of [owner.accountId, owner.workspaceId, owner.qrCodeId, owner.domainId, owner.webhookId])
      expect(seen).not.toContain(id);
    expect((await api("GET", "/account", { key: stranger.key })).body.id).toBe(stranger.accountId);

    await api("POST", "/workspaces", { key: owner.key, body: { name: "Second" } });
    const page = await api("GET", "/workspaces?limit=1", { key: owner.key });
    expect(page.body.next_cursor).toEqual(expect.any(String));
    const replayed = await api("GET", `/workspaces?limit=1&cursor=${encodeURIComponent(page.body.next_cursor)}`, {
      key: stranger.key,
    });
    expectError(replayed, 400, "validation_error");
  });
});
