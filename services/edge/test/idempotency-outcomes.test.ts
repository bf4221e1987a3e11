// Which answers an Idempotency-Key keeps: the middleware over a store in memory, in front of a route
// that answers whatever status the test asks for. Final answers are stored and replayed; answers that
// ask for a later retry (5xx, 408, 409, 429) release the key, so the retry runs again.
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, listenHttp } from "@qrplatform/platform";
import { ApiError } from "../src/http/api-error.js";
import { errorHandler } from "../src/http/error-handler.js";
import { idempotentRequests } from "../src/http/idempotency.js";
import { bulkCreateHandler } from "../src/resources/qr-codes-bulk.js";
import type { ClaimOutcome, IdempotencyStore, StoredResponse } from "../src/http/idempotency-store.js";

/** Keys in a Map: enough to see what the middleware claims, stores and releases. */
function memoryStore(): IdempotencyStore & { stored: Map<string, StoredResponse>; released: string[] } {
  const claims = new Map<string, { claimId: string; fingerprint: string }>();
  const stored = new Map<string, StoredResponse>();
  const released: string[] = [];
  let next = 0;
  return {
    stored,
    released,
    async claim(accountId, key, fingerprint): Promise<ClaimOutcome> {
      const id = `${accountId}/${key}`;
      const print = Buffer.from(fingerprint).toString("hex");
      const held = claims.get(id);
      if (!held) {
        const claimId = String(++next);
        claims.set(id, { claimId, fingerprint: print });
        return { state: "claimed", claimId };
      }
      if (held.fingerprint !== print) return { state: "reused" };
      const response = stored.get(id);
      return response ? { state: "completed", response } : { state: "in_progress", leaseExpiresAt: new Date() };
    },
    async complete(accountId, key, _claimId, response) {
      stored.set(`${accountId}/${key}`, response);
    },
    async release(accountId, key) {
      claims.delete(`${accountId}/${key}`);
      released.push(key);
    },
  };
}

describe("Idempotency-Key outcomes", () => {
  const logger = createLogger({ service: "test", level: "silent" });
  const store = memoryStore();
  let runs = 0;
  /** The item keys the bulk create ran, in order, and the status each item key answers (201 unless set). */
  const bulkRuns: string[] = [];
  const itemOutcomes = new Map<string, number>();
  let baseUrl: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const app = express();
    app.post(
      "/answer/:status",
      (_req, res, next) => {
        res.locals.caller = { accountId: "account" };
        next();
      },
      express.json(),
      idempotentRequests(store, logger, { inFlightWaitMs: 0 }),
      (req, res) => {
        runs++;
        const status = Number(req.params.status);
        if (status >= 400) throw new ApiError(status, "test_error", `Answered ${status}.`);
        res.status(status).location("/created").json({ run: runs });
      },
    );
    // The real bulk create over a catalog whose item outcomes the test sets: the status each item answers next.
    app.post(
      "/workspaces/:workspace_id/qr-codes/bulk",
      (_req, res, next) => {
        res.locals.caller = { accountId: "account" };
        next();
      },
      express.json(),
      idempotentRequests(store, logger, { inFlightWaitMs: 0 }),
      bulkCreateHandler(
        { getWorkspace: async () => ({}) } as never,
        async (_caller, _workspaceId, input, itemKey) => {
          bulkRuns.push(itemKey!.key);
          const status = itemOutcomes.get(itemKey!.key) ?? 201;
          if (status !== 201) throw new ApiError(status, "item_error", `Answered ${status}.`);
          return { id: `code-of ${itemKey!.key}`, name: (input as { name: string }).name } as never;
        },
        (_req, qrCode) => ({ id: qrCode.id }),
      ),
    );
    app.use(errorHandler(logger));
    const server = await listenHttp({ handler: app, host: "127.0.0.1", port: 0, logger, name: "test" });
    baseUrl = `http://127.0.0.1:${server.port}`;
    close = () => server.close();
  });
  afterAll(() => close?.());

  const send = async (status: number, key: string) => {
    const res = await fetch(`${baseUrl}/answer/${status}`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key },
      body: "{}",
    });
    return {
      status: res.status,
      replayed: res.headers.get("idempotent-replayed"),
      body: (await res.json()) as Record<string, any>,
    };
  };

  it.each([201, 200, 400, 403, 404, 422])(
    "stores a %i and replays it to the retry without running the route again",
    async (status) => {
      const key = `final-${status}`;
      const before = runs;
      const first = await send(status, key);
      const retry = await send(status, key);
      expect(runs - before).toBe(1);
      expect([first.status, first.replayed, retry.status, retry.replayed]).toEqual([status, null, status, "true"]);
      expect(store.stored.get(`account/${key}`)?.headers).toMatchObject({
        "content-type": "application/json; charset=utf-8",
      });
      if (status < 400) expect(retry.body).toEqual(first.body);
      else
        expect({ ...retry.body.error, request_id: undefined }).toEqual({ ...first.body.error, request_id: undefined });
      expect(store.released).not.toContain(key);
    },
  );

  it.each([500, 503, 504, 408, 409, 429])(
    "releases the key after a %i, so that the retry runs again",
    async (status) => {
      const key = `retry-${status}`;
      const before = runs;
      expect((await send(status, key)).status).toBe(status);
      expect(store.released).toContain(key);
      expect((await send(status, key)).replayed).toBeNull();
      expect(runs - before).toBe(2);
      expect(store.stored.has(`account/${key}`)).toBe(false);
    },
  );

  describe("a bulk create's 200", () => {
    const workspace = "3f0c9a1e-4b7d-4c8e-9a2b-5d6e7f8a9b0c";
    const sendBulk = async (key: string) => {
      const res = await fetch(`${baseUrl}/workspaces/${workspace}/qr-codes/bulk`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify({ items: [{ name: "a" }, { name: "b" }, { name: "c" }] }),
      });
      const body = (await res.json()) as { created: number; results: { status: number; qr_code?: { id: string } }[] };
      return {
        status: res.status,
        replayed: res.headers.get("idempotent-replayed"),
        statuses: body.results.map((r) => r.status),
        body,
      };
    };

    it.each([409, 500, 503, 504])(
      "is not kept when an item answered %i: the retry runs the call again and gets every item",
      async (status) => {
        const key = `bulk-${status}`;
        itemOutcomes.set(`${key} 1`, status);
        const first = await sendBulk(key);
        expect([first.status, first.statuses]).toEqual([200, [201, status, 201]]);
        expect(store.released).toContain(key);
        expect(store.stored.has(`account/${key}`)).toBe(false);

        // The item is done now: the retry is not a replay, and every item comes back under its own key.
        itemOutcomes.delete(`${key} 1`);
        bulkRuns.length = 0;
        const retry = await sendBulk(key);
        expect([retry.status, retry.replayed, retry.statuses, retry.body.created]).toEqual([
          200,
          null,
          [201, 201, 201],
          3,
        ]);
        expect(bulkRuns.sort()).toEqual([`${key} 0`, `${key} 1`, `${key} 2`]);
        expect(retry.body.results.map((r) => r.qr_code?.id)).toEqual([0, 1, 2].map((i) => `code-of ${key} ${i}`));
        // That answer is final, so it is the one kept.
        expect((await sendBulk(key)).replayed).toBe("true");
      },
    );

    it("is kept when every item's outcome is final, failures included", async () => {
      const key = "bulk-final";
      itemOutcomes.set(`${key} 2`, 403);
      const first = await sendBulk(key);
      expect(first.statuses).toEqual([201, 201, 403]);
      bulkRuns.length = 0;
      const retry = await sendBulk(key);
      expect([retry.replayed, retry.statuses]).toEqual(["true", [201, 201, 403]]);
      expect(bulkRuns).toEqual([]);
      expect(store.released).not.toContain(key);
    });
  });
});
