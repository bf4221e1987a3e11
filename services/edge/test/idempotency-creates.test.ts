// A retry of a workspace or webhook-endpoint create under its Idempotency-Key gets what the first request
// made, however that request's answer was lost: a timeout whose write went through (a frozen catalog
// answering after the edge gave up), or an edge that died after the commit. Both shapes; the frozen
// catalog needs processes.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { WebhookEndpointService, WorkspaceService } from "@qrplatform/api/catalog";
import { IdempotencyKeyService, IdempotencyKeyState } from "@qrplatform/api/tenancy";
import { remoteTransport } from "@qrplatform/platform";
import { requestFingerprint } from "../src/http/idempotency.js";
import { call, expectError, type ApiResponse } from "./support/http.js";
import { credentials, startStack, type EdgeReplica, type Stack, type StackMode } from "./support/stack.js";
import { newAccount as newTestAccount } from "./support/accounts.js";

const MODES: StackMode[] = ["in-process", "processes"];
/** Webhook URLs on loopback, which this stack allows; nothing is delivered to them. */
const HOOK_URL = "http://127.0.0.1:9/hooks";

describe.each(MODES)("Idempotency-Key on workspace and webhook creates [%s]", (mode) => {
  let stack: Stack;
  let replica: EdgeReplica;
  let keys: Client<typeof IdempotencyKeyService>;
  let workspaces: Client<typeof WorkspaceService>;
  let webhooks: Client<typeof WebhookEndpointService>;

  beforeAll(async () => {
    stack = await startStack(mode, { webhooks: { allowLoopback: true, pollIntervalMs: 1000 } });
    replica = await stack.startEdgeReplica();
    const transportOf = (service: Parameters<typeof createClient>[0], process: "tenancy" | "catalog"): Transport =>
      mode === "in-process"
        ? stack.grpcModules!.find(({ module }) => module.services.includes(service as never))!.transport
        : remoteTransport({ baseUrl: stack.grpcUrls![process], token: credentials.serviceToken });
    keys = createClient(IdempotencyKeyService, transportOf(IdempotencyKeyService, "tenancy"));
    workspaces = createClient(WorkspaceService, transportOf(WorkspaceService, "catalog"));
    webhooks = createClient(WebhookEndpointService, transportOf(WebhookEndpointService, "catalog"));
  }, 180_000);
  afterAll(() => stack?.close());

  const newAccount = () => newTestAccount(stack.admin, { name: "Creates" });

  function post(
    baseUrl: string,
    path: string,
    key: string,
    idempotencyKey: string | undefined,
    body: unknown,
  ): Promise<ApiResponse> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey;
    return call(baseUrl, "POST", path, { key, body, headers });
  }

  async function listed(key: string, path: string): Promise<{ id: string }[]> {
    const res = await call(stack.baseUrl, "GET", `${path}?limit=100`, { key });
    expect(res.status).toBe(200);
    return res.body.data;
  }

  /**
   * Plays an edge whose answer was lost after the catalog committed the create (it died, or answered 503/504):
   * claims the key, has the catalog make the resource under it as the route does, and frees the claim
   * without storing an answer, as the end of a dead edge's lease or the release after a 5xx does.
   */
  async function createAndLoseTheAnswer<T>(
    accountId: string,
    idempotencyKey: string,
    path: string,
    body: unknown,
    create: (key: { key: string; fingerprint: Uint8Array }) => Promise<T>,
  ): Promise<T> {
    const fingerprint = requestFingerprint("POST", `/api/v1${path}`, body);
    const claim = await keys.claimIdempotencyKey({ accountId, key: idempotencyKey, fingerprint });
    expect(claim.state).toBe(IdempotencyKeyState.CLAIMED);
    const made = await create({ key: idempotencyKey, fingerprint });
    await keys.releaseIdempotencyKey({ accountId, key: idempotencyKey, claimId: claim.claimId });
    return made;
  }

  it("gives 20 retries of a workspace create whose answer was lost that workspace, and makes no other", async () => {
    const { accountId, key } = await newAccount();
    const body = { name: "Spring campaign", description: "Posters" };
    const idempotencyKey = randomUUID();
    const lost = await createAndLoseTheAnswer(
      accountId,
      idempotencyKey,
      "/workspaces",
      body,
      async (idempotency) =>
        (
          await workspaces.createWorkspace({
            accountId,
            name: body.name,
            description: body.description,
            idempotencyKey: idempotency,
          })
        ).workspace!.id,
    );

    const retries = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(i % 2 ? replica.baseUrl : stack.baseUrl, "/workspaces", key, idempotencyKey, body),
      ),
    );
    expect(retries.map((res) => [res.status, res.body.id])).toEqual(Array(20).fill([201, lost]));
    expect(retries[0]!.headers.get("location")).toBe(`/api/v1/workspaces/${lost}`);
    expect((await listed(key, "/workspaces")).map((w) => w.id)).toEqual([lost]);
    expectError(
      await post(stack.baseUrl, "/workspaces", key, idempotencyKey, { ...body, name: "Another" }),
      422,
      "idempotency_key_reused",
    );
    // The catalog refuses the key for another request on its own, for callers that skip the edge.
    await expect(
      workspaces.createWorkspace({
        accountId,
        name: "Another",
        idempotencyKey: { key: idempotencyKey, fingerprint: requestFingerprint("POST", "/x", {}) },
      }),
    ).rejects.toThrow(/idempotency_key_reused|different request/);
  });

  it("gives 20 retries of a webhook create whose answer was lost that endpoint and the secret it was made with, with the account at its limit", async () => {
    const { accountId, key } = await newAccount();
    for (let i = 0; i < 19; i++)
      expect(
        (
          await post(stack.baseUrl, "/webhooks", key, undefined, {
            url: `${HOOK_URL}/${i}`,
            event_types: ["qr_code.created"],
          })
        ).status,
      ).toBe(201);
    const body = { url: `${HOOK_URL}/twentieth`, event_types: ["qr_code.created"] };
    const idempotencyKey = randomUUID();
    const lost = await createAndLoseTheAnswer(accountId, idempotencyKey, "/webhooks", body, async (idempotency) =>
      webhooks.createWebhookEndpoint({
        accountId,
        url: body.url,
        eventTypes: body.event_types,
        idempotencyKey: idempotency,
      }),
    );

    // The account holds its 20 endpoints, yet every retry gets the twentieth and its secret.
    const retries = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(i % 2 ? replica.baseUrl : stack.baseUrl, "/webhooks", key, idempotencyKey, body),
      ),
    );
    expect(retries.map((res) => [res.status, res.body.id, res.body.secret])).toEqual(
      Array(20).fill([201, lost.endpoint!.id, lost.secret]),
    );
    expect(await listed(key, "/webhooks")).toHaveLength(20);
    expectError(
      await post(stack.baseUrl, "/webhooks", key, randomUUID(), { ...body, url: `${HOOK_URL}/one-too-many` }),
      403,
      "webhook_endpoint_limit_reached",
    );
    expectError(
      await post(stack.baseUrl, "/webhooks", key, idempotencyKey, { ...body, url: `${HOOK_URL}/other` }),
      422,
      "idempotency_key_reused",
    );
  });

  it("still makes a new workspace and endpoint for each create without a key, or with a new key", async () => {
    const { key } = await newAccount();
    for (const idempotencyKey of [undefined, undefined, randomUUID(), randomUUID()]) {
      expect((await post(stack.baseUrl, "/workspaces", key, idempotencyKey, { name: "Same" })).status).toBe(201);
      expect(
        (
          await post(stack.baseUrl, "/webhooks", key, idempotencyKey && `${idempotencyKey}-hook`, {
            url: HOOK_URL,
            event_types: ["qr_code.created"],
          })
        ).status,
      ).toBe(201);
    }
    expect(await listed(key, "/workspaces")).toHaveLength(4);
    expect(await listed(key, "/webhooks")).toHaveLength(4);
  });

  if (mode === "processes") {
    it("makes one workspace and one endpoint for three retries that timed out against a frozen catalog and one after it resumed", async () => {
      const { key } = await newAccount();
      const requests = [
        { path: "/workspaces", body: { name: "Frozen" }, idempotencyKey: randomUUID() },
        {
          path: "/webhooks",
          body: { url: `${HOOK_URL}/frozen`, event_types: ["qr_code.created"] },
          idempotencyKey: randomUUID(),
        },
      ];
      const catalog = stack.processes!.catalog.child;
      catalog.kill("SIGSTOP");
      try {
        // Each retry waits out the edge's call timeout; the creates queue up in the frozen catalog.
        await Promise.all(
          requests.map(async ({ path, body, idempotencyKey }) => {
            for (let attempt = 0; attempt < 3; attempt++) {
              const res = await post(attempt % 2 ? replica.baseUrl : stack.baseUrl, path, key, idempotencyKey, body);
              expect([503, 504]).toContain(res.status);
            }
          }),
        );
      } finally {
        catalog.kill("SIGCONT");
      }
      for (const { path, body, idempotencyKey } of requests) {
        const after = await post(stack.baseUrl, path, key, idempotencyKey, body);
        expect(after.status).toBe(201);
        const again = await post(replica.baseUrl, path, key, idempotencyKey, body);
        expect([again.status, again.body.id, again.body.secret]).toEqual([201, after.body.id, after.body.secret]);
        expect((await listed(key, path)).map((r) => r.id)).toEqual([after.body.id]);
      }
    }, 120_000);
  }
});
