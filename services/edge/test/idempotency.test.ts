// Safe retries: every POST with an Idempotency-Key runs once, however often, wherever and whenever it is
// retried. Runs on both shapes: every service in this process, and every service and two edges as
// separate processes (where the edge is also restarted and a backend killed).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client } from "@connectrpc/connect";
import { IdempotencyKeyService, IdempotencyKeyState, SubscriptionTier } from "@qrplatform/api/tenancy";
import { remoteTransport } from "@qrplatform/platform";
import { requestFingerprint } from "../src/http/idempotency.js";
import { call, expectError, type ApiResponse } from "./support/http.js";
import { credentials, startStack, type EdgeReplica, type Stack, type StackMode } from "./support/stack.js";
import { newAccount as newTestAccount } from "./support/accounts.js";

const MODES: StackMode[] = ["in-process", "processes"];

describe.each(MODES)("Idempotency-Key [%s]", (mode) => {
  let stack: Stack;
  /** A second edge in front of the same services, waiting as long as the first for a running request. */
  let replica: EdgeReplica;
  /** A third edge that waits only 200 ms for a running request before it answers 409. */
  let impatient: EdgeReplica;
  /** Tenancy's idempotency keys, called as an edge calls them, to play an edge whose request is running. */
  let keys: Client<typeof IdempotencyKeyService>;

  beforeAll(async () => {
    stack = await startStack(mode);
    [replica, impatient] = await Promise.all([
      stack.startEdgeReplica(),
      stack.startEdgeReplica({ idempotencyWaitMs: 200 }),
    ]);
    const transport =
      mode === "in-process"
        ? stack.grpcModules!.find(({ module }) => module.services.includes(IdempotencyKeyService))!.transport
        : remoteTransport({ baseUrl: stack.grpcUrls!.tenancy, token: credentials.serviceToken });
    keys = createClient(IdempotencyKeyService, transport);
  }, 180_000);
  afterAll(() => stack?.close());

  const newAccount = (tier = SubscriptionTier.ORIGIN) => newTestAccount(stack.admin, { name: "Retry", tier });

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

  async function newWorkspace(key: string): Promise<string> {
    const res = await post(stack.baseUrl, "/workspaces", key, undefined, { name: "Posters" });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  /** The parts of an answer a replay repeats. */
  function answer(res: ApiResponse) {
    return { status: res.status, location: res.headers.get("location"), body: res.body };
  }

  async function countCodes(key: string, workspaceId: string): Promise<number> {
    const res = await call(stack.baseUrl, "GET", `/workspaces/${workspaceId}/qr-codes?limit=100`, { key });
    expect(res.status).toBe(200);
    return res.body.data.length;
  }

  it("runs each POST once for 20 identical requests sent at once to two edges, and gives all 20 the same answer", async () => {
    const { key } = await newAccount();
    const edges = [stack.baseUrl, replica.baseUrl];
    const twenty = (path: string, body: unknown) => {
      const idempotencyKey = randomUUID();
      return Promise.all(Array.from({ length: 20 }, (_, i) => post(edges[i % 2]!, path, key, idempotencyKey, body)));
    };

    const workspaces = await twenty("/workspaces", { name: "Spring campaign", description: "Posters" });
    expect(workspaces.map(answer)).toEqual(Array(20).fill(answer(workspaces[0]!)));
    expect(workspaces[0]!.status).toBe(201);
    expect(workspaces.filter((res) => res.headers.get("idempotent-replayed") === "true")).toHaveLength(19);
    const listed = await call(stack.baseUrl, "GET", "/workspaces?limit=100", { key });
    expect(listed.body.data.map((w: { id: string }) => w.id)).toEqual([workspaces[0]!.body.id]);

    const workspaceId = workspaces[0]!.body.id;
    const codes = await twenty(`/workspaces/${workspaceId}/qr-codes`, {
      name: "Menu",
      destination_url: "https://example.com/menu",
    });
    expect(codes.map(answer)).toEqual(Array(20).fill(answer(codes[0]!)));
    expect(codes[0]!.status).toBe(201);
    expect(codes.filter((res) => res.headers.get("idempotent-replayed") === "true")).toHaveLength(19);
    expect(await countCodes(key, workspaceId)).toBe(1);
  });

  it("replays the stored answer to a retry with the same body in any key order or spacing, and takes the quoted key as the same key", async () => {
    const { key } = await newAccount();
    const workspaceId = await newWorkspace(key);
    const path = `/workspaces/${workspaceId}/qr-codes`;
    const idempotencyKey = randomUUID();
    const first = await post(stack.baseUrl, path, key, idempotencyKey, {
      name: "Menu",
      destination_url: "https://example.com/menu",
      tags: ["a"],
    });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(first.headers.get("location")).toBe(`/api/v1/qr-codes/${first.body.id}`);

    const reordered = '{ "tags": ["a"],\n  "destination_url": "https://example.com/menu", "name": "Menu" }';
    const retry = await post(replica.baseUrl, path, key, `"${idempotencyKey}"`, reordered);
    expect(answer(retry)).toEqual(answer(first));
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(retry.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    expect(await countCodes(key, workspaceId)).toBe(1);
  });

  it("replays a final error too, with the retry's own request id", async () => {
    const { key } = await newAccount();
    const workspaceId = await newWorkspace(key);
    const idempotencyKey = randomUUID();
    const body = { name: "Broken", destination_url: "not a url" };
    const first = await post(stack.baseUrl, `/workspaces/${workspaceId}/qr-codes`, key, idempotencyKey, body);
    expectError(first, 400, "validation_error");
    const retry = await post(replica.baseUrl, `/workspaces/${workspaceId}/qr-codes`, key, idempotencyKey, body);
    expectError(retry, 400, "validation_error");
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect({ ...retry.body.error, request_id: undefined }).toEqual({ ...first.body.error, request_id: undefined });
  });

  it("refuses a key used again for a different body or path with 422, and runs nothing", async () => {
    const { key } = await newAccount();
    const workspaceId = await newWorkspace(key);
    const path = `/workspaces/${workspaceId}/qr-codes`;
    const idempotencyKey = randomUUID();
    expect(
      (
        await post(stack.baseUrl, path, key, idempotencyKey, {
          name: "Menu",
          destination_url: "https://example.com/menu",
        })
      ).status,
    ).toBe(201);

    const otherBody = await post(replica.baseUrl, path, key, idempotencyKey, {
      name: "Menu",
      destination_url: "https://example.com/other",
    });
    expectError(otherBody, 422, "idempotency_key_reused");
    expect(otherBody.body.error.details).toEqual({ header: "Idempotency-Key" });
    expectError(
      await post(stack.baseUrl, "/workspaces", key, idempotencyKey, { name: "Menu" }),
      422,
      "idempotency_key_reused",
    );
    expect(await countCodes(key, workspaceId)).toBe(1);
    const workspaces = await call(stack.baseUrl, "GET", "/workspaces", { key });
    expect(workspaces.body.data).toHaveLength(1);
  });

  it("answers 409 with Retry-After while the same request runs on another edge past the wait, and runs it once that edge lets go", async () => {
    const { accountId, key } = await newAccount();
    const body = { name: "Held" };
    const idempotencyKey = randomUUID();
    // Another edge is running this very request: it holds the key.
    const held = await keys.claimIdempotencyKey({
      accountId,
      key: idempotencyKey,
      fingerprint: requestFingerprint("POST", "/api/v1/workspaces", body),
    });
    expect(held.state).toBe(IdempotencyKeyState.CLAIMED);

    const busy = await post(impatient.baseUrl, "/workspaces", key, idempotencyKey, body);
    expectError(busy, 409, "idempotency_key_in_progress");
    expect(busy.headers.get("retry-after")).toBe("1");
    expect((await call(stack.baseUrl, "GET", "/workspaces", { key })).body.data).toHaveLength(0);
    // Another body is refused as reused even while the first runs.
    expectError(
      await post(impatient.baseUrl, "/workspaces", key, idempotencyKey, { name: "Other" }),
      422,
      "idempotency_key_reused",
    );

    // That edge's request failed and released the key: the retry runs.
    await keys.releaseIdempotencyKey({ accountId, key: idempotencyKey, claimId: held.claimId });
    const ran = await post(impatient.baseUrl, "/workspaces", key, idempotencyKey, body);
    expect(ran.status).toBe(201);
    expect(ran.headers.get("idempotent-replayed")).toBeNull();
  });

  it("keeps keys per account: another account's request with the same key and body runs on its own", async () => {
    const [first, second] = [await newAccount(), await newAccount()];
    const idempotencyKey = randomUUID();
    const a = await post(stack.baseUrl, "/workspaces", first.key, idempotencyKey, { name: "Shared key" });
    const b = await post(stack.baseUrl, "/workspaces", second.key, idempotencyKey, { name: "Shared key" });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get("idempotent-replayed")).toBeNull();
    expect(b.body.account_id).toBe(second.accountId);
    expect(b.body.id).not.toBe(a.body.id);
  });

  it("uses capacity once: retries of the create that takes the last place get it, a new create is refused", async () => {
    const { key } = await newAccount();
    const workspaceId = await newWorkspace(key);
    // Filled through the API: in the in-process shape a long pause without HTTP lets the server close an idle
    // keep-alive socket in the same turn as the client reuses it (ECONNRESET), as the two share one event loop.
    for (let batch = 0; batch < 99; batch += 33) {
      const fillers = Array.from({ length: 33 }, (_, i) =>
        post(stack.baseUrl, `/workspaces/${workspaceId}/qr-codes`, key, undefined, {
          name: `Filler ${batch + i}`,
          destination_url: "https://example.com/",
        }),
      );
      expect((await Promise.all(fillers)).map((res) => res.status)).toEqual(Array(33).fill(201));
    }
    const path = `/workspaces/${workspaceId}/qr-codes`;
    const idempotencyKey = randomUUID();
    const body = { name: "The hundredth", destination_url: "https://example.com/last" };
    const last = await post(stack.baseUrl, path, key, idempotencyKey, body);
    expect(last.status).toBe(201);
    const retries = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        post(i % 2 ? replica.baseUrl : stack.baseUrl, path, key, idempotencyKey, body),
      ),
    );
    expect(retries.map(answer)).toEqual(Array(5).fill(answer(last)));

    const refused = await post(stack.baseUrl, path, key, randomUUID(), { ...body, name: "One too many" });
    expectError(refused, 403, "qr_code_limit_reached");
    expect(refused.body.error.details).toEqual({ limit: 100, used: 100 });
  });

  /**
   * Plays an edge that dies (or answers 503/504) after the catalog committed its create: it claims the key,
   * has the catalog make the code under it, as the route does, and never stores the answer. The claim is
   * then freed, as the end of a dead edge's lease or the release after a 503 or 504 frees it.
   */
  async function createAndLoseTheAnswer(
    accountId: string,
    idempotencyKey: string,
    path: string,
    body: unknown,
    create: (key: { key: string; fingerprint: Uint8Array }) => Promise<unknown>,
  ) {
    const fingerprint = requestFingerprint("POST", `/api/v1${path}`, body);
    const claim = await keys.claimIdempotencyKey({ accountId, key: idempotencyKey, fingerprint });
    expect(claim.state).toBe(IdempotencyKeyState.CLAIMED);
    await create({ key: idempotencyKey, fingerprint });
    await keys.releaseIdempotencyKey({ accountId, key: idempotencyKey, claimId: claim.claimId });
  }

  it("gives the retry of a create whose answer was lost after the commit that code, in one place of capacity", async () => {
    const { accountId, key } = await newAccount();
    const workspaceId = await newWorkspace(key);
    // 99 of the origin plan's 100 places, in one bulk call.
    const fillers = Array.from({ length: 99 }, (_, i) => ({
      name: `Filler ${i}`,
      destination_url: "https://example.com/",
    }));
    expect(
      (await post(stack.baseUrl, `/workspaces/${workspaceId}/qr-codes/bulk`, key, undefined, { items: fillers })).body
        .created,
    ).toBe(99);
    const path = `/workspaces/${workspaceId}/qr-codes`;
    const body = { name: "The hundredth", destination_url: "https://example.com/last" };
    const idempotencyKey = randomUUID();
    let lost: string | undefined;
    await createAndLoseTheAnswer(accountId, idempotencyKey, path, body, async (idempotency) => {
      const { qrCode } = await stack.catalog.createQrCode({
        accountId,
        workspaceId,
        name: body.name,
        destinationUrl: body.destination_url,
        idempotencyKey: idempotency,
      });
      lost = qrCode!.id;
    });

    // The account is full, yet every retry gets the code the lost answer held, and none makes another.
    const retries = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(i % 2 ? replica.baseUrl : stack.baseUrl, path, key, idempotencyKey, body),
      ),
    );
    expect(retries.map((res) => [res.status, res.body.id])).toEqual(Array(20).fill([201, lost]));
    expect(retries[0]!.headers.get("location")).toBe(`/api/v1/qr-codes/${lost}`);
    expect((await stack.catalog.getCapacity({ accountId })).capacity?.qrCodesUsed).toBe(100n);
    expectError(
      await post(stack.baseUrl, path, key, randomUUID(), { ...body, name: "One too many" }),
      403,
      "qr_code_limit_reached",
    );
    // The same key with another body is still refused.
    expectError(
      await post(stack.baseUrl, path, key, idempotencyKey, { ...body, name: "Another" }),
      422,
      "idempotency_key_reused",
    );
  });

  it("gives the retry of a bulk create whose answer was lost the codes its items already made, and makes only the others", async () => {
    const { accountId, key } = await newAccount();
    const workspaceId = await newWorkspace(key);
    const path = `/workspaces/${workspaceId}/qr-codes/bulk`;
    const items = [0, 1, 2].map((i) => ({ name: `Item ${i}`, destination_url: `https://example.com/${i}` }));
    const body = { items };
    const idempotencyKey = randomUUID();
    const lost: string[] = [];
    // The edge made items 0 and 2, then died.
    await createAndLoseTheAnswer(accountId, idempotencyKey, path, body, async ({ fingerprint }) => {
      for (const i of [0, 2]) {
        const { qrCode } = await stack.catalog.createQrCode({
          accountId,
          workspaceId,
          name: items[i]!.name,
          destinationUrl: items[i]!.destination_url,
          idempotencyKey: { key: `${idempotencyKey} ${i}`, fingerprint },
        });
        lost.push(qrCode!.id);
      }
    });
    const retry = await post(stack.baseUrl, path, key, idempotencyKey, body);
    expect(retry.status).toBe(200);
    expect(retry.body.results.map((r: { status: number }) => r.status)).toEqual([201, 201, 201]);
    expect([retry.body.results[0].qr_code.id, retry.body.results[2].qr_code.id]).toEqual(lost);
    expect(await countCodes(key, workspaceId)).toBe(3);
  });

  it("refuses a malformed key with 400 invalid_idempotency_key before running anything", async () => {
    const { key } = await newAccount();
    for (const bad of [
      "",
      "x".repeat(256),
      "has space",
      '"unterminated',
      'in"side',
      "back\\slash",
      "é",
      "a, b",
      '""',
    ]) {
      const res = await post(stack.baseUrl, "/workspaces", key, bad, { name: "Never" });
      expectError(res, 400, "invalid_idempotency_key");
      expect(res.body.error.details).toEqual({ header: "Idempotency-Key" });
    }
    const twice = new Headers({ authorization: `Bearer ${key}`, "content-type": "application/json" });
    twice.append("idempotency-key", "first");
    twice.append("idempotency-key", "second");
    const res = await fetch(`${stack.baseUrl}/workspaces`, {
      method: "POST",
      headers: twice,
      body: JSON.stringify({ name: "Never" }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_idempotency_key");
    expect((await call(stack.baseUrl, "GET", "/workspaces", { key })).body.data).toHaveLength(0);
    // The longest key and every visible character but " and \ are fine.
    expect((await post(stack.baseUrl, "/workspaces", key, "k".repeat(255), { name: "Long key" })).status).toBe(201);
    expect(
      (await post(stack.baseUrl, "/workspaces", key, "!#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~", { name: "Odd key" }))
        .status,
    ).toBe(201);
  });

  if (mode === "processes") {
    it("keeps keys across a restart of the edge", async () => {
      const { key } = await newAccount();
      const idempotencyKey = randomUUID();
      const first = await post(stack.baseUrl, "/workspaces", key, idempotencyKey, { name: "Before the restart" });
      expect(first.status).toBe(201);
      await stack.processes!.edge.kill("SIGTERM");
      await stack.processes!.edge.start();
      const retry = await post(stack.baseUrl, "/workspaces", key, idempotencyKey, { name: "Before the restart" });
      expect(answer(retry)).toEqual(answer(first));
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
    }, 60_000);

    it("releases the key of a request that failed, so that its retry runs", async () => {
      const { key } = await newAccount();
      const workspaceId = await newWorkspace(key);
      const path = `/workspaces/${workspaceId}/qr-codes`;
      const idempotencyKey = randomUUID();
      const body = { name: "After the outage", destination_url: "https://example.com/back" };
      await stack.processes!.catalog.kill();
      try {
        expectError(await post(stack.baseUrl, path, key, idempotencyKey, body), 503, "service_unavailable");
      } finally {
        await stack.processes!.catalog.start();
      }
      const ran = await post(stack.baseUrl, path, key, idempotencyKey, body);
      expect(ran.status).toBe(201);
      expect(ran.headers.get("idempotent-replayed")).toBeNull();
      expect(answer(await post(replica.baseUrl, path, key, idempotencyKey, body))).toEqual(answer(ran));
      expect(await countCodes(key, workspaceId)).toBe(1);
    }, 60_000);
  }
});
