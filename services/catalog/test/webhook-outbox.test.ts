// The catalog's webhook outbox on its own: an event commits with its transaction or not at all, goes
// only to endpoints of its account that subscribed to it (held for disabled ones, within a bound), is
// stored once however often a relay
// repeats it, and each due delivery is claimed by one worker at a time; the relay turns the links
// service's scan events into one tally per code.
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { describe, expect, it } from "vitest";
import { useCatalogDatabase } from "./support/catalog-database.js";
import {
  AcknowledgeOutboxEventsResponseSchema,
  LinkScanCountSchema,
  ListOutboxEventsResponseSchema,
  OutboxEventSchema,
  type OutboxEvent,
  type OutboxService,
} from "@qrplatform/api/links";
import { createLogger } from "@qrplatform/platform";
import type { CatalogTables } from "../src/tables.js";
import { OutboxRelay } from "../src/webhooks/outbox-relay.js";
import { claimDueDeliveries } from "../src/webhooks/webhook-deliveries.repository.js";
import { retryDelayMs } from "../src/webhooks/webhook-dispatcher.js";
import { MAX_HELD_DELIVERIES_PER_ENDPOINT, recordEvent, type WebhookEvent } from "../src/webhooks/webhook-events.js";
import { DEFAULT_WEBHOOK_OPTIONS } from "../src/webhooks/webhook-options.js";

let db: Kysely<CatalogTables>;
useCatalogDatabase((opened) => (db = opened));

async function endpoint(
  accountId: string,
  eventTypes: string[],
  status: "enabled" | "disabled" = "enabled",
): Promise<string> {
  const id = randomUUID();
  await db
    .insertInto("webhook_endpoints")
    .values({
      id,
      account_id: accountId,
      url: "https://93.184.215.14/",
      description: null,
      event_types: eventTypes,
      secret: "whsec_AAAA",
      status,
    })
    .execute();
  return id;
}

const event = (accountId: string, type: WebhookEvent["type"] = "qr_code.updated", id?: string): WebhookEvent => ({
  id,
  accountId,
  type,
  data: { id: randomUUID() },
  occurredAt: new Date(),
});

/** Claim bounds that hold nothing back, for tests of claiming itself. */
const UNBOUNDED = { limit: 100, perAccount: 100, perEndpoint: 100, busy: [] };

const deliveriesOf = (accountId: string) =>
  db.selectFrom("webhook_deliveries").selectAll().where("account_id", "=", accountId).execute();

describe("the webhook outbox", () => {
  it("stores nothing when the change's transaction rolls back, and the event with its change when it commits", async () => {
    const accountId = randomUUID();
    await endpoint(accountId, ["qr_code.updated"]);
    await expect(
      db.transaction().execute(async (trx) => {
        await recordEvent(trx, event(accountId));
        throw new Error("the change failed");
      }),
    ).rejects.toThrow("the change failed");
    expect(await deliveriesOf(accountId)).toEqual([]);
    expect(await db.selectFrom("webhook_events").selectAll().where("account_id", "=", accountId).execute()).toEqual([]);

    await db.transaction().execute((trx) => recordEvent(trx, event(accountId)));
    expect(await deliveriesOf(accountId)).toHaveLength(1);
  });

  it("delivers only to the account's endpoints subscribed to the type, holding a disabled one's, and stores a repeated event once", async () => {
    const accountId = randomUUID();
    const subscribed = await endpoint(accountId, ["qr_code.created", "domain.verified"]);
    await endpoint(accountId, ["qr_code.deleted"]);
    const disabled = await endpoint(accountId, ["qr_code.created"], "disabled");
    await endpoint(randomUUID(), ["qr_code.created"]);
    await db.transaction().execute((trx) => recordEvent(trx, event(accountId, "qr_code.created")));
    const relayedId = randomUUID();
    await db.transaction().execute((trx) => recordEvent(trx, event(accountId, "domain.verified", relayedId)));
    await db.transaction().execute((trx) => recordEvent(trx, event(accountId, "domain.verified", relayedId)));
    const deliveries = await deliveriesOf(accountId);
    expect(deliveries.map((d) => [d.endpoint_id, d.event_type]).sort()).toEqual(
      [
        [subscribed, "domain.verified"],
        [subscribed, "qr_code.created"],
        [disabled, "qr_code.created"],
      ].sort(),
    );
    // Held: the disabled endpoint's delivery is not claimed.
    const claimed = await claimDueDeliveries(db, new Date(Date.now() + 1000), 60_000, UNBOUNDED);
    expect(
      claimed
        .filter((d) => d.account_id === accountId)
        .map((d) => d.endpoint_id)
        .sort(),
    ).toEqual([subscribed, subscribed]);

    const quiet = randomUUID();
    await db.transaction().execute((trx) => recordEvent(trx, event(quiet, "qr_code.created")));
    expect(await db.selectFrom("webhook_events").selectAll().where("account_id", "=", quiet).execute()).toEqual([]);
  });

  it("holds at most the bound of deliveries for a disabled endpoint, dropping the oldest and counting them", async () => {
    const accountId = randomUUID();
    const disabled = await endpoint(accountId, ["qr_code.updated"], "disabled");
    const start = Date.now() - 3_600_000;
    // The bound's worth of held deliveries, oldest first, written at once.
    const events = Array.from({ length: MAX_HELD_DELIVERIES_PER_ENDPOINT }, (_, i) => ({
      id: randomUUID(),
      account_id: accountId,
      type: "qr_code.updated",
      body: "{}",
      created_at: new Date(start + i * 1000),
    }));
    await db.insertInto("webhook_events").values(events).execute();
    await db
      .insertInto("webhook_deliveries")
      .values(
        events.map((e) => ({
          id: randomUUID(),
          account_id: accountId,
          endpoint_id: disabled,
          event_id: e.id,
          event_type: e.type,
          status: "pending",
          next_attempt_at: e.created_at,
          created_at: e.created_at,
        })),
      )
      .execute();

    await db.transaction().execute((trx) => recordEvent(trx, event(accountId)));
    await db.transaction().execute((trx) => recordEvent(trx, event(accountId)));

    const held = await deliveriesOf(accountId);
    expect(held).toHaveLength(MAX_HELD_DELIVERIES_PER_ENDPOINT);
    const kept = new Set(held.map((d) => d.event_id));
    expect(kept.has(events[0]!.id) || kept.has(events[1]!.id)).toBe(false);
    expect(kept.has(events[2]!.id)).toBe(true);
    const row = await db
      .selectFrom("webhook_endpoints")
      .select("held_deliveries_dropped")
      .where("id", "=", disabled)
      .executeTakeFirstOrThrow();
    expect(row.held_deliveries_dropped).toBe(2);
  });

  it("claims each due delivery for one worker at a time, and again once the lease has ended", async () => {
    const accountId = randomUUID();
    await endpoint(accountId, ["qr_code.updated"]);
    for (let i = 0; i < 5; i++) await db.transaction().execute((trx) => recordEvent(trx, event(accountId)));
    const now = new Date(Date.now() + 1000);
    const [a, b] = await Promise.all([
      claimDueDeliveries(db, now, 60_000, UNBOUNDED),
      claimDueDeliveries(db, now, 60_000, UNBOUNDED),
    ]);
    const mine = (rows: { account_id: string; id: string }[]) =>
      rows.filter((r) => r.account_id === accountId).map((r) => r.id);
    expect(new Set([...mine(a), ...mine(b)]).size).toBe(5);
    expect(mine(a).length + mine(b).length).toBe(5);
    expect(mine(await claimDueDeliveries(db, now, 60_000, UNBOUNDED))).toEqual([]);
    const afterLease = await claimDueDeliveries(db, new Date(now.getTime() + 61_000), 60_000, UNBOUNDED);
    expect(mine(afterLease).sort()).toEqual([...mine(a), ...mine(b)].sort());
    expect(afterLease.filter((r) => r.account_id === accountId).every((r) => r.attempts === 2)).toBe(true);
  });

  it("spreads retries by ±20 % around the schedule and stops after its last step", () => {
    expect(retryDelayMs([1000, 5000], 1, () => 0)).toBe(800);
    expect(retryDelayMs([1000, 5000], 2, () => 1)).toBe(6000);
    expect(retryDelayMs([1000, 5000], 3)).toBeUndefined();
  });

  it("tallies each code of a scan event naming several links, for accounts with an endpoint that wants them, and acknowledges the event", async () => {
    const [wanting, notWanting] = [randomUUID(), randomUUID()];
    await endpoint(wanting, ["qr_code.scanned"]);
    await endpoint(notWanting, ["qr_code.updated"]);
    const codes = [
      { id: randomUUID(), accountId: wanting, linkId: randomUUID() },
      { id: randomUUID(), accountId: wanting, linkId: randomUUID() },
      { id: randomUUID(), accountId: notWanting, linkId: randomUUID() },
    ];
    await db
      .insertInto("qr_codes")
      .values(
        codes.map((code) => ({
          id: code.id,
          account_id: code.accountId,
          name: "menu",
          destination_url: "https://example.com/",
          status: "active",
          link_id: code.linkId,
          design: "{}",
        })),
      )
      .execute();
    // The links service's outbox as the relay reads it: a fold's event per account, naming its links;
    // all in one tally period.
    const now = new Date();
    const scanEvent = (accountId: string, counts: [string, number][]) =>
      create(OutboxEventSchema, {
        id: randomUUID(),
        accountId,
        type: "link.scanned",
        occurTime: timestampFromDate(now),
        linkScans: counts.map(([linkId, scanCount]) =>
          create(LinkScanCountSchema, { linkId, scanCount: BigInt(scanCount) }),
        ),
      });
    let waiting: OutboxEvent[] = [
      scanEvent(wanting, [
        [codes[0]!.linkId, 3],
        [codes[1]!.linkId, 2],
      ]),
      scanEvent(notWanting, [[codes[2]!.linkId, 4]]),
      scanEvent(wanting, [[codes[0]!.linkId, 1]]),
    ];
    const outbox = {
      listOutboxEvents: async () => create(ListOutboxEventsResponseSchema, { events: waiting }),
      acknowledgeOutboxEvents: async ({ eventIds }: { eventIds: string[] }) => {
        waiting = waiting.filter((event) => !eventIds.includes(event.id));
        return create(AcknowledgeOutboxEventsResponseSchema, { removed: eventIds.length });
      },
    } as unknown as Client<typeof OutboxService>;
    const relay = new OutboxRelay(
      db,
      outbox,
      DEFAULT_WEBHOOK_OPTIONS,
      createLogger({ service: "test", level: "silent" }),
      () => now,
    );
    await relay.runOnce();

    expect(waiting).toEqual([]);
    const tallies = await db
      .selectFrom("scan_tallies")
      .select(["qr_code_id", "scans"])
      .where("account_id", "in", [wanting, notWanting])
      .execute();
    expect(new Map(tallies.map((tally) => [tally.qr_code_id, Number(tally.scans)]))).toEqual(
      new Map([
        [codes[0]!.id, 4],
        [codes[1]!.id, 2],
      ]),
    );
  });

  it.each([
    ["link.scan_limit_reached", "qr_code.scan_limit_reached", 50n],
    ["link.expired", "qr_code.expired", 0n],
  ])("turns %s into one %s event of its code, however often it is relayed", async (linkType, codeType, count) => {
    const accountId = randomUUID();
    await endpoint(accountId, [codeType]);
    const code = { id: randomUUID(), linkId: randomUUID() };
    await db
      .insertInto("qr_codes")
      .values({
        id: code.id,
        account_id: accountId,
        name: "limited",
        destination_url: "https://example.com/",
        status: "active",
        link_id: code.linkId,
        design: "{}",
      })
      .execute();
    const now = new Date();
    const reached = create(OutboxEventSchema, {
      id: randomUUID(),
      accountId,
      type: linkType,
      occurTime: timestampFromDate(now),
      linkScans: [create(LinkScanCountSchema, { linkId: code.linkId, scanCount: count })],
    });
    // Listed twice, as after a crash between the relay's commit and its acknowledgement.
    for (let pass = 0; pass < 2; pass++) {
      const outbox = {
        listOutboxEvents: async () => create(ListOutboxEventsResponseSchema, { events: [reached] }),
        acknowledgeOutboxEvents: async () => create(AcknowledgeOutboxEventsResponseSchema, { removed: 1 }),
      } as unknown as Client<typeof OutboxService>;
      await new OutboxRelay(
        db,
        outbox,
        DEFAULT_WEBHOOK_OPTIONS,
        createLogger({ service: "test", level: "silent" }),
        () => now,
      ).runOnce();
    }
    const events = await db
      .selectFrom("webhook_events")
      .select(["id", "type", "body"])
      .where("account_id", "=", accountId)
      .execute();
    expect(events.map((e) => [e.id, e.type])).toEqual([[reached.id, codeType]]);
    expect(JSON.parse(events[0]!.body).data).toEqual(
      codeType === "qr_code.expired"
        ? { qr_code_id: code.id, expired_at: now.toISOString() }
        : { qr_code_id: code.id, max_scans: 50, reached_at: now.toISOString() },
    );
    expect(await deliveriesOf(accountId)).toHaveLength(1);
  });
});
