// Leader election on a coordination.k8s.io/v1 Lease, as client-go does it: a replica takes the lease
// when nobody holds it or its holder stopped renewing for a whole lease duration (measured on this
// replica's own clock from when it last saw the lease change, so clocks need not agree), renews it
// every third of the duration, and every write carries the resourceVersion it read, so a 409 means
// another replica wrote first. A leader that cannot renew within the renew deadline, or finds the
// lease taken, stops acting at once. On shutdown the leader clears holderIdentity, and the other
// replica takes over at its next look instead of after a lease duration.
import { setTimeout as delay } from "node:timers/promises";
import { V1MicroTime, type V1Lease } from "@kubernetes/client-node";
import type { Logger } from "@qrplatform/platform";
import type { OperatorMetrics } from "../metrics.js";
import { statusOf, type KubeApi } from "./client.js";

export interface LeaseSettings {
  /** The Lease's name in the operator's namespace. */
  name: string;
  /** How long a lease lasts without renewal. */
  durationMs: number;
  /** How often the leader renews (a third of the duration by default). */
  renewIntervalMs?: number;
  /** How often a standby looks at the lease (a third of the duration by default). */
  retryIntervalMs?: number;
}

export interface LeaderElectionOptions {
  api: KubeApi;
  lease: LeaseSettings;
  /** This replica's identity (POD_NAME). */
  identity: string;
  logger: Logger;
  metrics: OperatorMetrics;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
}

/** What was last seen of the lease, and when (monotonic milliseconds). */
interface Observation {
  holder: string;
  resourceVersion: string;
  at: number;
}

export class LeaderElection {
  private leading = false;
  /** When this replica last wrote the lease successfully (monotonic). */
  private renewedAt = 0;
  private observed: Observation | undefined;
  private lease: V1Lease | undefined;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly renewIntervalMs: number;
  private readonly retryIntervalMs: number;
  /** A leader that has not renewed for this long stops acting, before the lease can expire for others. */
  private readonly renewDeadlineMs: number;

  constructor(private readonly options: LeaderElectionOptions) {
    const { durationMs } = options.lease;
    this.renewIntervalMs = options.lease.renewIntervalMs ?? durationMs / 3;
    this.retryIntervalMs = options.lease.retryIntervalMs ?? durationMs / 3;
    this.renewDeadlineMs = (durationMs * 2) / 3;
  }

  /** Whether this replica holds the lease now: it won it and renewed it within the renew deadline. */
  get isLeader(): boolean {
    return this.leading && performance.now() - this.renewedAt < this.renewDeadlineMs;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops competing; a leader stops acting and releases the lease for the other replica. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
    if (this.leading) {
      this.lose("shutting down");
      await this.release();
    }
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      try {
        await this.tryAcquireOrRenew();
      } catch (error) {
        this.options.logger.warn(
          { err: error, lease: this.options.lease.name },
          "could not read or write the leader lease",
        );
      }
      if (this.leading && !this.isLeader) this.lose("the lease was not renewed within the renew deadline");
      await delay(this.leading ? this.renewIntervalMs : this.retryIntervalMs, undefined, { signal }).catch(
        () => undefined,
      );
    }
  }

  private async tryAcquireOrRenew(): Promise<void> {
    const { api, lease: settings, identity } = this.options;
    const now = new V1MicroTime();
    const durationSeconds = Math.max(1, Math.round(settings.durationMs / 1000));
    const current = await api.readLease(settings.name);
    if (!current) {
      try {
        this.lease = await api.createLease({
          metadata: { name: settings.name, namespace: api.namespace },
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: durationSeconds,
            acquireTime: now,
            renewTime: now,
            leaseTransitions: 0,
          },
        });
        this.won();
      } catch (error) {
        // Another replica created it first.
        if (statusOf(error) !== 409) throw error;
      }
      return;
    }
    this.lease = current;
    const spec = current.spec ?? {};
    const holder = spec.holderIdentity ?? "";
    const resourceVersion = current.metadata?.resourceVersion ?? "";
    if (!this.observed || this.observed.holder !== holder || this.observed.resourceVersion !== resourceVersion) {
      this.observed = { holder, resourceVersion, at: performance.now() };
    }
    if (holder !== "" && holder !== identity) {
      if (this.leading) this.lose(`the lease is held by ${holder}`);
      const heldForMs = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
      if (performance.now() - this.observed.at < heldForMs) return;
      this.options.logger.info({ holder, lease: settings.name }, "the leader lease expired; taking it over");
    }
    const ours = holder === identity;
    const next: V1Lease = {
      ...current,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        // Times go back as MicroTime (six fractional digits), however they were read.
        acquireTime: ours && spec.acquireTime ? new V1MicroTime(spec.acquireTime) : now,
        renewTime: now,
        leaseTransitions: ours ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
      },
    };
    try {
      this.lease = await api.replaceLease(next);
      this.won();
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
      // Someone else wrote the lease since it was read: they hold it now.
      if (this.leading) this.lose("another replica wrote the lease");
    }
  }

  private won(): void {
    this.renewedAt = performance.now();
    if (this.leading) return;
    this.leading = true;
    this.options.metrics.leader.set(1);
    this.options.logger.info({ identity: this.options.identity, lease: this.options.lease.name }, "became the leader");
    this.options.onStartedLeading();
  }

  private lose(why: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.options.metrics.leader.set(0);
    const log = { identity: this.options.identity, lease: this.options.lease.name, why };
    if (this.abort.signal.aborted) this.options.logger.info(log, "stopped leading");
    else this.options.logger.warn(log, "stopped leading");
    this.options.onStoppedLeading();
  }

  /** Clears holderIdentity, if the lease is still ours, so the other replica need not wait for it to expire. */
  private async release(): Promise<void> {
    const lease = this.lease;
    if (!lease || lease.spec?.holderIdentity !== this.options.identity) return;
    try {
      await this.options.api.replaceLease({
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: undefined,
          leaseDurationSeconds: 1,
          acquireTime: lease.spec.acquireTime ? new V1MicroTime(lease.spec.acquireTime) : undefined,
          renewTime: new V1MicroTime(),
        },
      });
      this.options.logger.info({ lease: this.options.lease.name }, "released the leader lease");
    } catch (error) {
      this.options.logger.warn(
        { err: error, lease: this.options.lease.name },
        "could not release the leader lease; the other replica takes over when it expires",
      );
    }
  }
}
