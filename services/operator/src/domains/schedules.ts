// The domain schedules, run by the leader only and always through DomainService: verified domains are
// re-verified every REVERIFY_INTERVAL_SECONDS (from their last check), pending and failed ones checked
// every PENDING_CHECK_INTERVAL_SECONDS, and a domain never verified within UNVERIFIED_DOMAIN_TTL_SECONDS
// of its creation is deleted (unless live links use it: domain_in_use is logged and skipped).
import { setTimeout as delay } from "node:timers/promises";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import pLimit from "p-limit";
import { DomainState, type Domain } from "@qrplatform/api/links";
import { Code, ConnectError, errorInfoOf, type Logger } from "@qrplatform/platform";
import type { OperatorMetrics } from "../metrics.js";
import type { DomainClient } from "./client.js";
import type { DomainCache } from "./domain-cache.js";

export interface SchedulePeriods {
  reverifyMs: number;
  pendingCheckMs: number;
  unverifiedTtlMs: number;
  /** How often the domains are looked through for what is due. */
  tickMs: number;
}

export type ScheduledAction = "reverify" | "check" | "expire";

/**
 * What is due for a domain now, if anything. `attemptedAt` is when this operator last called for it
 * and failed or was refused: it waits a pending-check period before trying again.
 */
export function dueAction(
  domain: Domain,
  now: Date,
  periods: SchedulePeriods,
  attemptedAt?: Date,
): ScheduledAction | undefined {
  const at = now.getTime();
  if (attemptedAt && attemptedAt.getTime() + periods.pendingCheckMs > at) return undefined;
  const created = millis(domain.createTime);
  if (domain.state === DomainState.VERIFIED) {
    const lastCheck = millis(domain.lastCheckTime ?? domain.verifyTime ?? domain.createTime);
    return lastCheck + periods.reverifyMs <= at ? "reverify" : undefined;
  }
  if (created + periods.unverifiedTtlMs <= at) return "expire";
  const lastCheck = millis(domain.lastCheckTime ?? domain.createTime);
  return lastCheck + periods.pendingCheckMs <= at ? "check" : undefined;
}

export interface DomainSchedulesOptions {
  client: DomainClient;
  cache: DomainCache;
  periods: SchedulePeriods;
  logger: Logger;
  metrics: OperatorMetrics;
  now: () => Date;
  /** DomainService calls at once (each verification is a DNS lookup on the links service). */
  concurrency?: number;
}

export class DomainSchedules {
  private readonly attempts = new Map<string, Date>();
  private abort: AbortController | undefined;
  private loop: Promise<void> | undefined;

  constructor(private readonly options: DomainSchedulesOptions) {}

  /** Starts ticking (on gaining the lease). */
  start(): void {
    if (this.abort) return;
    const abort = new AbortController();
    this.abort = abort;
    this.loop = this.run(abort.signal);
  }

  /** Stops ticking and waits for the calls in flight (on losing the lease, or shutdown). */
  async stop(): Promise<void> {
    this.abort?.abort();
    this.abort = undefined;
    await this.loop;
    this.loop = undefined;
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (this.options.cache.listed) await this.tick(signal);
      await delay(this.options.periods.tickMs, undefined, { signal }).catch(() => undefined);
    }
  }

  /** One pass over the domains: every due call, a few at a time. */
  async tick(signal?: AbortSignal): Promise<void> {
    const { cache, periods, now } = this.options;
    const limit = pLimit(this.options.concurrency ?? 4);
    const due = cache.all().flatMap((domain) => {
      const action = dueAction(domain, now(), periods, this.attempts.get(domain.id));
      return action ? [{ domain, action }] : [];
    });
    await Promise.all(
      due.map(({ domain, action }) =>
        limit(() => (signal?.aborted ? undefined : this.perform(domain, action, signal))),
      ),
    );
  }

  private async perform(domain: Domain, action: ScheduledAction, signal: AbortSignal | undefined): Promise<void> {
    const { client, cache, logger, metrics } = this.options;
    const log = { domainId: domain.id, hostname: domain.hostname, action };
    try {
      if (action === "expire") {
        await client.deleteDomain({ accountId: "", domainId: domain.id }, { signal });
        cache.forget(domain.id);
        logger.info(log, "deleted a domain that was never verified in time");
      } else {
        const response = await client.verifyDomain({ accountId: "", domainId: domain.id }, { signal });
        if (response.domain) cache.remember(response.domain);
        logger.debug({ ...log, state: response.domain?.state }, "checked a domain's DNS challenge");
      }
      this.attempts.delete(domain.id);
      metrics.scheduled.inc({ action, result: "ok" });
    } catch (error) {
      if (signal?.aborted) return;
      this.attempts.set(domain.id, this.options.now());
      const failure = ConnectError.from(error);
      if (failure.code === Code.NotFound) {
        cache.forget(domain.id);
        metrics.scheduled.inc({ action, result: "skipped" });
      } else if (action === "expire" && errorInfoOf(failure)?.reason === "domain_in_use") {
        logger.info(log, "a never-verified domain is past its time but live links use it; not deleted");
        metrics.scheduled.inc({ action, result: "skipped" });
      } else {
        logger.warn(
          { ...log, err: failure },
          "a scheduled domain call failed; trying again after the pending-check period",
        );
        metrics.scheduled.inc({ action, result: "error" });
      }
    }
  }
}

function millis(timestamp: Timestamp | undefined): number {
  return timestamp ? timestampDate(timestamp).getTime() : 0;
}
