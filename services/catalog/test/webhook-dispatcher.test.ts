// The dispatcher is fair by construction: one account's endpoints that never answer hold only that
// account's slots (each endpoint at most its own bound), and another account's delivery is made while
// every one of them still hangs.
import { randomUUID } from "node:crypto";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Kysely } from "kysely";
import { describe, expect, it } from "vitest";
import { useCatalogDatabase } from "./support/catalog-database.js";
import { createLogger } from "@qrplatform/platform";
import type { CatalogTables } from "../src/tables.js";
import { WebhookDispatcher } from "../src/webhooks/webhook-dispatcher.js";
import { recordEvent } from "../src/webhooks/webhook-events.js";
import { webhookEnv, webhookOptionsFromEnv } from "../src/webhooks/webhook-env.js";
import { DEFAULT_WEBHOOK_OPTIONS } from "../src/webhooks/webhook-options.js";

let db: Kysely<CatalogTables>;
useCatalogDatabase((opened) => (db = opened));

/** A receiver on loopback: requests under /hang/ are held open, the rest are answered 204 and kept. */
class Receiver {
  private readonly server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.url?.startsWith("/hang/")) {
        this.hanging.push({ path: req.url, res });
        res.on("close", () => this.ended++);
        return;
      }
      this.accepted.push(req.url ?? "");
      res.writeHead(204).end();
    });
  });
  readonly hanging: { path: string; res: ServerResponse }[] = [];
  readonly accepted: string[] = [];
  /** Held requests that ended (the dispatcher gave up on them). */
  ended = 0;
  url = "";

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const { res } of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

async function endpoint(accountId: string, url: string): Promise<string> {
  const id = randomUUID();
  await db
    .insertInto("webhook_endpoints")
    .values({
      id,
      account_id: accountId,
      url,
      description: null,
      event_types: ["qr_code.updated"],
      secret: "whsec_AAAA",
      status: "enabled",
    })
    .execute();
  return id;
}

async function waitFor(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("the webhook dispatcher", () => {
  it("delivers another account's event while one account's endpoints hang in every slot that account may use", async () => {
    const receiver = await new Receiver().start();
    // An attempt would wait a minute for an answer: nothing here may depend on one ending.
    const options = {
      ...DEFAULT_WEBHOOK_OPTIONS,
      pollIntervalMs: 50,
      timeoutMs: 60_000,
      allowLoopback: true,
      concurrency: 4,
      accountConcurrency: 2,
      endpointConcurrency: 1,
    };
    const dispatcher = new WebhookDispatcher(
      db,
      options,
      createLogger({ service: "test", level: "silent" }),
      () => new Date(),
    );
    try {
      const slow = randomUUID();
      for (let i = 0; i < 3; i++) await endpoint(slow, `${receiver.url}/hang/${i}`);
      const earlier = new Date(Date.now() - 60_000);
      for (let i = 0; i < 10; i++)
        await db
          .transaction()
          .execute((trx) =>
            recordEvent(trx, { accountId: slow, type: "qr_code.updated", data: { i }, occurredAt: earlier }),
          );
      const other = randomUUID();
      await endpoint(other, `${receiver.url}/other`);
      await db
        .transaction()
        .execute((trx) =>
          recordEvent(trx, { accountId: other, type: "qr_code.updated", data: {}, occurredAt: new Date() }),
        );

      dispatcher.start();
      await waitFor(
        "the other account's delivery and the slow account's slots all taken",
        () => receiver.accepted.length > 0 && receiver.hanging.length >= 2,
      );

      expect(receiver.accepted).toEqual(["/other"]);
      // Every one of the slow account's attempts still hangs: the other account's delivery waited for none.
      expect(receiver.ended).toBe(0);
      expect(receiver.hanging).toHaveLength(options.accountConcurrency);
      expect(new Set(receiver.hanging.map((h) => h.path)).size).toBe(options.accountConcurrency);
    } finally {
      await receiver.close();
      await dispatcher.stop();
    }
  }, 60_000);

  it("claims a freed slot as soon as its attempt ends, with no batch to wait for", async () => {
    const receiver = await new Receiver().start();
    const options = {
      ...DEFAULT_WEBHOOK_OPTIONS,
      pollIntervalMs: 60_000,
      timeoutMs: 60_000,
      allowLoopback: true,
      concurrency: 2,
      accountConcurrency: 1,
      endpointConcurrency: 1,
    };
    const dispatcher = new WebhookDispatcher(
      db,
      options,
      createLogger({ service: "test", level: "silent" }),
      () => new Date(),
    );
    try {
      const hangingAccount = randomUUID();
      await endpoint(hangingAccount, `${receiver.url}/hang/0`);
      await db.transaction().execute((trx) =>
        recordEvent(trx, {
          accountId: hangingAccount,
          type: "qr_code.updated",
          data: {},
          occurredAt: new Date(Date.now() - 1000),
        }),
      );
      const busy = randomUUID();
      await endpoint(busy, `${receiver.url}/busy`);
      for (let i = 0; i < 5; i++)
        await db
          .transaction()
          .execute((trx) =>
            recordEvent(trx, { accountId: busy, type: "qr_code.updated", data: { i }, occurredAt: new Date() }),
          );

      // One pass only (the next is a minute away): the busy account's five deliveries go one after
      // another through its single slot while the other slot hangs.
      dispatcher.start();
      await waitFor("the busy account's five deliveries", () => receiver.accepted.length === 5);
      expect(receiver.hanging).toHaveLength(1);
      expect(receiver.ended).toBe(0);
    } finally {
      await receiver.close();
      await dispatcher.stop();
    }
  }, 60_000);

  it("reads its bounds from the environment and refuses bounds that let one account take every slot", () => {
    expect(
      webhookOptionsFromEnv(
        webhookEnv.parse({
          WEBHOOK_CONCURRENCY: "32",
          WEBHOOK_ACCOUNT_CONCURRENCY: "8",
          WEBHOOK_ENDPOINT_CONCURRENCY: "3",
        }),
      ),
    ).toMatchObject({
      concurrency: 32,
      accountConcurrency: 8,
      endpointConcurrency: 3,
    });
    expect(webhookOptionsFromEnv(webhookEnv.parse({}))).toMatchObject({
      concurrency: 16,
      accountConcurrency: 4,
      endpointConcurrency: 2,
    });
    expect(() =>
      webhookOptionsFromEnv(webhookEnv.parse({ WEBHOOK_CONCURRENCY: "4", WEBHOOK_ACCOUNT_CONCURRENCY: "4" })),
    ).toThrow(/WEBHOOK_ACCOUNT_CONCURRENCY must be below WEBHOOK_CONCURRENCY/);
    expect(() =>
      webhookOptionsFromEnv(webhookEnv.parse({ WEBHOOK_ACCOUNT_CONCURRENCY: "2", WEBHOOK_ENDPOINT_CONCURRENCY: "3" })),
    ).toThrow(/WEBHOOK_ENDPOINT_CONCURRENCY/);
  });
});
