// Webhook fairness benchmark: the catalog's dispatcher with production's options (10 s attempt timeout,
// 1 s poll, its concurrency bounds) on the embedded database (or Postgres with DATABASE_URL), sending
// to a receiver on 127.0.0.1. One account has 20 endpoints that never answer and 2,000 deliveries
// queued for them; another account's single event is then raised, and the time until the receiver has
// it is the figure, beside the 5 s target and beside the same delay with no load (the ceiling). Runs
// in well under a minute: every wait is bounded.
import { randomUUID } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Kysely } from "kysely";
import { migrateSchema } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { createLogger } from "@qrplatform/platform";
import { migrations, SCHEMA } from "../../services/catalog/migrations/index.js";
import type { CatalogTables } from "../../services/catalog/src/tables.js";
import { WebhookDispatcher } from "../../services/catalog/src/webhooks/webhook-dispatcher.js";
import { recordEvent } from "../../services/catalog/src/webhooks/webhook-events.js";
import { DEFAULT_WEBHOOK_OPTIONS } from "../../services/catalog/src/webhooks/webhook-options.js";

const TARGET_MS = 5000;
const HANGING_ENDPOINTS = 20;
const QUEUED = 2000;
const WAIT_LIMIT_MS = 30_000;

const hanging: ServerResponse[] = [];
const arrivals = new Map<string, () => void>();
const receiver = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    if (req.url?.startsWith("/hang/")) return void hanging.push(res);
    res.writeHead(204).end();
    arrivals.get(String(req.headers["webhook-id"]))?.();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const baseUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

const database = await openTestDatabase();
await migrateSchema(database.db, SCHEMA, migrations);
const db = database.db.withSchema(SCHEMA) as Kysely<CatalogTables>;
const options = { ...DEFAULT_WEBHOOK_OPTIONS, allowLoopback: true };
const logger = createLogger({ service: "bench", level: "silent" });

async function addEndpoint(accountId: string, url: string): Promise<void> {
  await db
    .insertInto("webhook_endpoints")
    .values({
      id: randomUUID(),
      account_id: accountId,
      url,
      description: null,
      event_types: ["qr_code.updated"],
      secret: "whsec_AAAA",
      status: "enabled",
    })
    .execute();
}

/** Raises one event for the account and answers how long until the receiver had it. */
async function delayOfOneEvent(accountId: string): Promise<number> {
  const id = randomUUID();
  const arrived = new Promise<void>((resolve, reject) => {
    arrivals.set(id, resolve);
    setTimeout(
      () => reject(new Error(`the event was not delivered within ${WAIT_LIMIT_MS} ms`)),
      WAIT_LIMIT_MS,
    ).unref();
  });
  const started = performance.now();
  await db
    .transaction()
    .execute((trx) =>
      recordEvent(trx, { id, accountId, type: "qr_code.updated", data: { bench: true }, occurredAt: new Date() }),
    );
  await arrived;
  return performance.now() - started;
}

const dispatcher = new WebhookDispatcher(db, options, logger, () => new Date());
let result: { ceiling: number; loaded: number } | undefined;
try {
  const quiet = randomUUID();
  await addEndpoint(quiet, `${baseUrl}/quiet`);
  dispatcher.start();
  const ceiling = await delayOfOneEvent(quiet);

  const noisy = randomUUID();
  for (let i = 0; i < HANGING_ENDPOINTS; i++) await addEndpoint(noisy, `${baseUrl}/hang/${i}`);
  for (let i = 0; i < QUEUED / HANGING_ENDPOINTS; i++) {
    await db
      .transaction()
      .execute((trx) =>
        recordEvent(trx, { accountId: noisy, type: "qr_code.updated", data: { i }, occurredAt: new Date() }),
      );
  }
  // The noisy account's attempts take every slot it may use before the other's event is raised.
  const until = Date.now() + WAIT_LIMIT_MS;
  while (hanging.length < options.accountConcurrency && Date.now() < until)
    await new Promise((resolve) => setTimeout(resolve, 20));
  const loaded = await delayOfOneEvent(quiet);
  result = { ceiling, loaded };
} finally {
  const stopped = dispatcher.stop();
  for (const res of hanging) res.destroy();
  receiver.closeAllConnections();
  receiver.close();
  await stopped;
  await database.close();
}

if (!result) throw new Error("no figures were measured");
console.log(
  `webhook fairness (${options.timeoutMs / 1000} s attempt timeout, ${options.concurrency} slots, ${options.accountConcurrency} an account, ${options.endpointConcurrency} an endpoint)`,
);
console.log(
  `  another account's event, no load:                                     ${result.ceiling.toFixed(0)} ms (ceiling)`,
);
console.log(
  `  another account's event, ${QUEUED} deliveries queued to ${HANGING_ENDPOINTS} hanging endpoints: ${result.loaded.toFixed(0)} ms (target ${TARGET_MS} ms)`,
);
if (result.loaded > TARGET_MS) {
  console.log(`  FAILED: over the ${TARGET_MS} ms target`);
  process.exitCode = 1;
}
