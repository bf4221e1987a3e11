import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { sql, type Kysely, type Transaction } from "kysely";
import type { OutboxEvent, OutboxService } from "@qrplatform/api/links";
import { PeriodicPass, type Logger } from "@qrplatform/platform";
import type { CatalogTables } from "../tables.js";
import { deleteExpired } from "./webhook-deliveries.repository.js";
import { recordEvent } from "./webhook-events.js";
import type { WebhookOptions } from "./webhook-options.js";

/** Any number that is ours alone: the advisory lock one relay holds at a time, across catalog processes. */
const RELAY_LOCK = 0x71720017;
const BATCH = 500;
const DAY_MS = 24 * 60 * 60 * 1000;
const SWEEP_EVERY_MS = 60_000;

/** One link's scans of a link.scanned event. */
interface LinkScans {
  linkId: string;
  accountId: string;
  occurredAt: Date;
  scanCount: bigint;
}

/**
 * Brings the links service's outbox events into the catalog, where webhooks are delivered from, and
 * turns scan tallies whose period ended into `qr_code.scanned` events. Each pass, in one catalog
 * transaction under an advisory lock (one relay at a time, in order): the events not relayed before
 * are remembered (relayed_outbox_events) and become webhook events (domain.verified and
 * the qr_code lifecycle events keep the outbox event's id) or add to their QR code's tally for the period. Only after the commit are they
 * acknowledged to the links service, so a crash in between makes the next pass list them again and
 * add nothing. Every catalog process runs one; also deletes what retention no longer keeps.
 */
export class OutboxRelay {
  private readonly passes: PeriodicPass;
  private lastSweep = 0;

  constructor(
    private readonly db: Kysely<CatalogTables>,
    private readonly outbox: Client<typeof OutboxService>,
    private readonly options: WebhookOptions,
    logger: Logger,
    private readonly now: () => Date,
  ) {
    this.passes = new PeriodicPass(
      () => this.runOnce(),
      options.pollIntervalMs,
      (error) => logger.warn({ err: error }, "webhook outbox relay pass failed; retrying next interval"),
    );
  }

  start(): void {
    this.passes.start();
  }

  /** Stops the passes, waiting for one under way. */
  stop(): Promise<void> {
    return this.passes.stop();
  }

  /** One pass: relay what the links service recorded, close ended scan periods, sweep now and then. */
  async runOnce(): Promise<void> {
    for (;;) {
      const { events } = await this.outbox.listOutboxEvents({ pageSize: BATCH });
      if (events.length > 0) {
        if (!(await this.relay(events))) break;
        await this.outbox.acknowledgeOutboxEvents({ eventIds: events.map((event) => event.id) });
      }
      if (events.length < BATCH) break;
    }
    await this.closeScanPeriods();
    const now = this.now();
    if (now.getTime() - this.lastSweep >= SWEEP_EVERY_MS) {
      this.lastSweep = now.getTime();
      await deleteExpired(
        this.db,
        new Date(now.getTime() - this.options.retentionMs),
        new Date(now.getTime() - DAY_MS),
        1000,
      );
    }
  }

  /** Stores the events not relayed before; false when another relay holds the lock (it relays them). */
  private async relay(events: OutboxEvent[]): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const { rows: locked } = await sql<{
        locked: boolean;
      }>`SELECT pg_try_advisory_xact_lock(${RELAY_LOCK}) AS locked`.execute(trx);
      if (!locked[0]!.locked) return false;
      const fresh = await trx
        .insertInto("relayed_outbox_events")
        .values(events.map((event) => ({ id: event.id })))
        .onConflict((c) => c.doNothing())
        .returning("id")
        .execute();
      const isFresh = new Set(fresh.map((row) => row.id));
      const scans: LinkScans[] = [];
      for (const event of events.filter((e) => isFresh.has(e.id))) {
        const occurredAt = timestampDate(event.occurTime!);
        if (event.type === "link.scanned") {
          for (const { linkId, scanCount } of event.linkScans)
            scans.push({ linkId, accountId: event.accountId, occurredAt, scanCount });
        } else if (event.type === "link.scan_limit_reached" || event.type === "link.expired") {
          await this.recordLifecycleEvent(trx, event, occurredAt);
        } else if (event.type === "domain.verified") {
          await recordEvent(trx, {
            id: event.id,
            accountId: event.accountId,
            type: "domain.verified",
            data: { id: event.domainId, hostname: event.hostname, verified_at: occurredAt.toISOString() },
            occurredAt,
          });
        }
      }
      if (scans.length > 0) await this.tally(trx, scans);
      return true;
    });
  }

  /**
   * `qr_code.scan_limit_reached` or `qr_code.expired` for the code of the event's link, keeping the
   * outbox event's id (the links service writes one each time the limit is reached or an expiry
   * passes). A link that is no code's (a code deleted since) sends nothing.
   */
  private async recordLifecycleEvent(
    trx: Transaction<CatalogTables>,
    event: OutboxEvent,
    occurredAt: Date,
  ): Promise<void> {
    const [reached] = event.linkScans;
    if (reached === undefined) return;
    const code = await trx
      .selectFrom("qr_codes")
      .select("id")
      .where("link_id", "=", reached.linkId)
      .where("account_id", "=", event.accountId)
      .executeTakeFirst();
    if (!code) return;
    await recordEvent(
      trx,
      event.type === "link.expired"
        ? {
            id: event.id,
            accountId: event.accountId,
            type: "qr_code.expired",
            data: { qr_code_id: code.id, expired_at: occurredAt.toISOString() },
            occurredAt,
          }
        : {
            id: event.id,
            accountId: event.accountId,
            type: "qr_code.scan_limit_reached",
            data: { qr_code_id: code.id, max_scans: Number(reached.scanCount), reached_at: occurredAt.toISOString() },
            occurredAt,
          },
    );
  }

  /** Adds scans to their QR code's tally for the period, for accounts with an endpoint that wants them. */
  private async tally(trx: Transaction<CatalogTables>, scans: LinkScans[]): Promise<void> {
    const period = this.options.scanPeriodMs;
    const periodStart = (scan: LinkScans) =>
      new Date(Math.floor(scan.occurredAt.getTime() / period) * period).toISOString();
    await sql`
      INSERT INTO catalog.scan_tallies (qr_code_id, period_start, account_id, scans)
      SELECT code.id, batch.period_start, code.account_id, sum(batch.scans)
      FROM unnest(${scans.map((s) => s.linkId)}::uuid[], ${scans.map((s) => s.accountId)}::uuid[],
                  ${scans.map(periodStart)}::timestamptz[], ${scans.map((s) => String(s.scanCount))}::bigint[])
        AS batch (link_id, account_id, period_start, scans)
      JOIN catalog.qr_codes AS code ON code.link_id = batch.link_id AND code.account_id = batch.account_id
      WHERE EXISTS (
        SELECT 1 FROM catalog.webhook_endpoints AS e
        WHERE e.account_id = batch.account_id AND e.status = 'enabled' AND 'qr_code.scanned' = ANY(e.event_types)
      )
      GROUP BY 1, 2, 3
      ON CONFLICT (qr_code_id, period_start) DO UPDATE SET scans = scan_tallies.scans + excluded.scans
    `.execute(trx);
  }

  /** Turns every tally whose period has ended into one `qr_code.scanned` event, in one transaction per batch. */
  private async closeScanPeriods(): Promise<void> {
    const period = this.options.scanPeriodMs;
    const ended = new Date(this.now().getTime() - period);
    for (;;) {
      const closed = await this.db.transaction().execute(async (trx) => {
        const tallies = await trx
          .deleteFrom("scan_tallies")
          .where("qr_code_id", "in", (eb) =>
            eb
              .selectFrom("scan_tallies")
              .select("qr_code_id")
              .where("period_start", "<=", ended)
              .limit(BATCH)
              .forUpdate()
              .skipLocked(),
          )
          .where("period_start", "<=", ended)
          .returningAll()
          .execute();
        for (const tally of tallies) {
          const periodEnd = new Date(tally.period_start.getTime() + period);
          await recordEvent(trx, {
            accountId: tally.account_id,
            type: "qr_code.scanned",
            data: {
              qr_code_id: tally.qr_code_id,
              scans: Number(tally.scans),
              period_start: tally.period_start.toISOString(),
              period_end: periodEnd.toISOString(),
            },
            occurredAt: periodEnd,
          });
        }
        return tallies.length;
      });
      if (closed < BATCH) return;
    }
  }
}
