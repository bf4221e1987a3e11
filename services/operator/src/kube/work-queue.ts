// The work queue of reconciles: one entry per key however often it is added, one worker per key at a
// time, and a failed key retried with exponential backoff. A key added while it is being processed is
// processed again afterwards, so no change seen during a reconcile is lost.
import type { Logger, Metrics } from "@qrplatform/platform";
import { Backoff, type BackoffSettings } from "../backoff.js";

/** What processing a key may ask for besides success: to be looked at again after a while. */
export interface ProcessResult {
  requeueAfterMs?: number;
}

export interface WorkQueueOptions {
  /** Processes one key; a rejection retries the key with backoff. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a processor with nothing to report may return nothing at all.
  process: (key: string) => Promise<ProcessResult | void>;
  backoff: BackoffSettings;
  /** How many keys are processed at once. */
  workers: number;
  logger: Logger;
  metrics: Metrics;
  /** Counts each processing by result (ok, error). */
  onProcessed?: (result: "ok" | "error", seconds: number) => void;
}

export class WorkQueue {
  private readonly pending: string[] = [];
  private readonly queued = new Set<string>();
  private readonly active = new Set<string>();
  /** Keys added while they were being processed. */
  private readonly again = new Set<string>();
  private readonly failures = new Map<string, Backoff>();
  /** Delayed additions (retries, requeues), at most one per key: the earliest. */
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private running = false;
  private workers: Promise<void>[] = [];
  private wake: (() => void) | undefined;
  private closed = false;

  constructor(private readonly options: WorkQueueOptions) {
    options.metrics.gaugeOnScrape(
      { name: "qrp_operator_queue_depth", help: "Keys waiting in the reconcile queue (retries not yet due excluded)." },
      (gauge) => gauge.set(this.pending.length),
    );
  }

  /** Keys waiting to be processed now. */
  get depth(): number {
    return this.pending.length;
  }

  /** Queues a key for processing as soon as a worker is free; a key already waiting is not queued twice. */
  add(key: string): void {
    if (this.closed) return;
    if (this.active.has(key)) {
      this.again.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.pending.push(key);
    this.wake?.();
  }

  /** Queues a key after `ms`; an earlier delayed addition of the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.closed) return;
    const at = Date.now() + ms;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.delayed.set(key, { at, timer });
  }

  /** Starts the workers; keys added while stopped wait for them. */
  start(): void {
    if (this.running || this.closed) return;
    this.running = true;
    this.workers = Array.from({ length: this.options.workers }, () => this.work());
  }

  /** Stops taking keys and waits for the ones being processed; waiting keys stay queued for the next start. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await Promise.all(this.workers);
    this.workers = [];
  }

  /** Stops for good: also drops the delayed additions. */
  async close(): Promise<void> {
    this.closed = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    await this.stop();
  }

  private async work(): Promise<void> {
    while (this.running) {
      const key = this.pending.shift();
      if (key === undefined) {
        await new Promise<void>((resolve) => {
          const previous = this.wake;
          this.wake = () => {
            this.wake = undefined;
            previous?.();
            resolve();
          };
        });
        continue;
      }
      this.queued.delete(key);
      this.active.add(key);
      try {
        await this.processOne(key);
      } finally {
        this.active.delete(key);
        if (this.again.delete(key)) this.add(key);
      }
    }
  }

  private async processOne(key: string): Promise<void> {
    const started = performance.now();
    try {
      const result = await this.options.process(key);
      this.failures.delete(key);
      this.options.onProcessed?.("ok", (performance.now() - started) / 1000);
      if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
    } catch (error) {
      this.options.onProcessed?.("error", (performance.now() - started) / 1000);
      let backoff = this.failures.get(key);
      if (!backoff) {
        backoff = new Backoff(this.options.backoff);
        this.failures.set(key, backoff);
      }
      const retryInMs = backoff.next();
      this.options.logger.warn(
        { err: error, queueKey: key, attempt: backoff.attempt, retryInMs },
        "reconcile failed; retrying with backoff",
      );
      this.addAfter(key, retryInMs);
    }
  }
}
