import { noMetrics, PeriodicPass, type Logger, type Metrics } from "@qrplatform/platform";
import type { Counter, Histogram } from "prom-client";
import type { Kysely } from "kysely";
import type { CatalogTables } from "../tables.js";
import {
  claimDueDeliveries,
  recordFailure,
  recordSuccess,
  type ClaimedDelivery,
} from "./webhook-deliveries.repository.js";
import type { WebhookOptions } from "./webhook-options.js";
import { sendWebhook } from "./webhook-sender.js";
import { webhookSignature } from "./webhook-signature.js";
import { deliveryAddressPolicy } from "./webhook-url.js";

/** The wait before retry `attempt` (1 for the first retry), with ±20 % jitter so retries of many deliveries spread out. */
export function retryDelayMs(schedule: readonly number[], attempt: number, random = Math.random): number | undefined {
  const base = schedule[attempt - 1];
  return base === undefined ? undefined : Math.round(base * (0.8 + 0.4 * random()));
}

/**
 * Sends due deliveries: every catalog process runs one, and any number may run at once, because each
 * delivery is claimed for one attempt at a time with a lease (see claimDueDeliveries). Attempts run
 * in slots with no batch to wait for: a slot is claimed again as soon as its attempt ends, and a
 * claim never takes an endpoint or account past its bound, so slow endpoints hold only their own
 * account's slots and every other account keeps being served. An attempt is
 * a success when the endpoint answers 2xx; anything else (another status, a redirect, no answer within
 * the timeout, a refused address) is retried on the schedule, and when the schedule is spent the
 * delivery has failed and the endpoint is disabled unless something else reached it meanwhile.
 */
export class WebhookDispatcher {
  private readonly passes: PeriodicPass;
  private readonly attempts: Counter<"outcome">;
  private readonly disabled: Counter;
  private readonly duration: Histogram;
  /** Attempts under way, by delivery id. */
  private readonly underWay = new Map<string, { delivery: ClaimedDelivery; done: Promise<void> }>();
  private filling: Promise<number> | undefined;
  private fillAgain = false;
  private stopped = false;

  constructor(
    private readonly db: Kysely<CatalogTables>,
    private readonly options: WebhookOptions,
    private readonly logger: Logger,
    private readonly now: () => Date,
    metrics: Metrics = noMetrics,
  ) {
    this.attempts = metrics.counter({
      name: "qrp_webhook_attempts_total",
      help: "Webhook delivery attempts, by outcome (succeeded, failed: retried later, given_up: no retry left).",
      labelNames: ["outcome"],
    });
    this.disabled = metrics.counter({
      name: "qrp_webhook_endpoints_disabled_total",
      help: "Webhook endpoints disabled because their deliveries kept failing.",
    });
    this.duration = metrics.histogram({
      name: "qrp_webhook_attempt_duration_seconds",
      help: "Time a webhook attempt took, answer or not.",
    });
    this.passes = new PeriodicPass(
      () => this.runOnce(),
      options.pollIntervalMs,
      (error) => logger.warn({ err: error }, "webhook delivery pass failed; retrying next interval"),
    );
  }

  /** The longest an attempt may hold its claim: beyond its timeout, so a live attempt never loses it. */
  private get leaseMs(): number {
    return this.options.timeoutMs * 2 + 5000;
  }

  start(): void {
    this.stopped = false;
    this.passes.start();
  }

  /** Stops claiming, waiting for the attempts under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.passes.stop();
    await this.filling;
    await Promise.all([...this.underWay.values()].map((slot) => slot.done));
  }

  /**
   * Claims due deliveries into the free slots until none fits, starting each attempt without waiting
   * for it; returns how many were started. A call while a claim runs makes that claim go round again.
   */
  async runOnce(): Promise<number> {
    if (this.filling) {
      this.fillAgain = true;
      return 0;
    }
    this.filling = this.fill().finally(() => (this.filling = undefined));
    return this.filling;
  }

  private async fill(): Promise<number> {
    let started = 0;
    do {
      this.fillAgain = false;
      for (;;) {
        const limit = this.options.concurrency - this.underWay.size;
        if (limit <= 0 || this.stopped) break;
        const claimed = await claimDueDeliveries(this.db, this.now(), this.leaseMs, {
          limit,
          perAccount: this.options.accountConcurrency,
          perEndpoint: this.options.endpointConcurrency,
          busy: [...this.underWay.values()].map(({ delivery }) => ({
            account_id: delivery.account_id,
            endpoint_id: delivery.endpoint_id,
          })),
        });
        for (const delivery of claimed) this.begin(delivery);
        started += claimed.length;
        if (claimed.length < limit) break;
      }
    } while (this.fillAgain && !this.stopped);
    return started;
  }

  /** Runs one attempt in a slot; when it ends, the slot is claimed again at once. */
  private begin(delivery: ClaimedDelivery): void {
    const done = this.attempt(delivery).finally(() => {
      this.underWay.delete(delivery.id);
      if (!this.stopped && this.passes.active) {
        this.runOnce().catch((error: unknown) =>
          this.logger.warn({ err: error }, "webhook delivery claim failed; retrying next interval"),
        );
      }
    });
    this.underWay.set(delivery.id, { delivery, done });
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const sentAt = this.now();
    const timestamp = Math.floor(sentAt.getTime() / 1000);
    const secrets = [delivery.secret];
    if (delivery.previous_secret && delivery.previous_secret_expires_at && delivery.previous_secret_expires_at > sentAt)
      secrets.push(delivery.previous_secret);
    const headers = {
      "webhook-id": delivery.event_id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": webhookSignature(secrets, delivery.event_id, timestamp, delivery.body),
    };
    const outcome = await sendWebhook(delivery.url, headers, delivery.body, {
      timeoutMs: this.options.timeoutMs,
      maxResponseBytes: this.options.maxResponseBytes,
      isAllowedAddress: deliveryAddressPolicy(this.options),
      lookup: this.options.lookup,
    });
    const now = this.now();
    const durationMs = now.getTime() - sentAt.getTime();
    this.duration.observe(durationMs / 1000);
    const succeeded = "status" in outcome && outcome.status >= 200 && outcome.status <= 299;
    try {
      if (succeeded) {
        await recordSuccess(
          this.db,
          delivery,
          { attemptedAt: sentAt, durationMs, responseStatus: outcome.status, error: null },
          now,
        );
        this.attempts.inc({ outcome: "succeeded" });
        return;
      }
      const error =
        "error" in outcome
          ? outcome.error
          : `answered HTTP ${outcome.status}${outcome.excerpt ? `: ${outcome.excerpt}` : ""}`;
      const delay = retryDelayMs(this.options.retryScheduleMs, delivery.attempts);
      const hours = Math.round((now.getTime() - delivery.created_at.getTime()) / 360_000) / 10;
      const disabled = await recordFailure(
        this.db,
        delivery,
        { attemptedAt: sentAt, durationMs, responseStatus: "status" in outcome ? outcome.status : null, error },
        delay === undefined ? undefined : new Date(now.getTime() + delay),
        now,
        `Disabled after every attempt for ${hours} hours failed (last: ${error}). Fix the endpoint, then enable it again; its pending deliveries resume.`,
      );
      this.attempts.inc({ outcome: delay === undefined ? "given_up" : "failed" });
      if (disabled) {
        this.disabled.inc();
        this.logger.warn(
          { endpointId: delivery.endpoint_id, accountId: delivery.account_id },
          "webhook endpoint disabled: its deliveries kept failing",
        );
      }
    } catch (error) {
      // The claim's lease runs out and the delivery is attempted again: at least once.
      this.logger.warn(
        { err: error, deliveryId: delivery.id },
        "could not record a webhook attempt; it will be made again",
      );
    }
  }
}
