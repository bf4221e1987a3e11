// A cache of one resource kept current by @kubernetes/client-node's informer (list, then watch from the
// list's resourceVersion). That informer stops for good on most errors (a failed list, a watch refused
// with 500 or 429, a dropped connection), so this one starts it again after exponential backoff, or
// after the server's Retry-After when it said one. Its cache survives the restart: a relist after 410
// Gone tells the deletions it missed.
import { setTimeout as delay } from "node:timers/promises";
import {
  ApiException,
  makeInformer,
  type Informer,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
} from "@kubernetes/client-node";
import type { Logger } from "@qrplatform/platform";
import { Backoff, type BackoffSettings } from "../backoff.js";
import type { OperatorMetrics } from "../metrics.js";
import type { KubeApi, Resource } from "./client.js";
import type { KubeObject } from "./objects.js";

export type ChangeKind = "add" | "update" | "delete";

export interface ResourceInformerOptions<T extends KubeObject> {
  api: KubeApi;
  resource: Resource;
  backoff: BackoffSettings;
  logger: Logger;
  metrics: OperatorMetrics;
  /** Every object added, updated or deleted, as the cache now holds it (or last held it). */
  onChange: (object: T, change: ChangeKind) => void;
}

export class ResourceInformer<T extends KubeObject> {
  // client-node types timestamps as Date; they arrive as JSON strings, as KubeObject says.
  private readonly informer: Informer<KubernetesObject> & ObjectCache<KubernetesObject>;
  private readonly backoff: Backoff;
  private readonly abort = new AbortController();
  private hasSynced = false;
  private failedSinceStart = false;
  private restarting: Promise<void> | undefined;
  private readonly syncWaiters: (() => void)[] = [];

  constructor(private readonly options: ResourceInformerOptions<T>) {
    const { api, resource } = options;
    this.backoff = new Backoff(options.backoff);
    const list = async () => (await api.list<T>(resource)) as unknown as KubernetesListObject<KubernetesObject>;
    this.informer = makeInformer(api.config, api.path(resource), list);
    this.informer.on("add", (object) => options.onChange(object as unknown as T, "add"));
    this.informer.on("update", (object) => options.onChange(object as unknown as T, "update"));
    this.informer.on("delete", (object) => options.onChange(object as unknown as T, "delete"));
    this.informer.on("connect", () => options.logger.debug({ resource: resource.plural }, "watch connecting"));
    this.informer.on("error", (error) => this.failed(error));
  }

  /** Whether the first list has arrived: before that, an absent object proves nothing. */
  get synced(): boolean {
    return this.hasSynced;
  }

  /** Resolves once synced. */
  whenSynced(): Promise<void> {
    if (this.hasSynced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  get(name: string): T | undefined {
    return this.informer.get(name, this.options.resource.namespaced ? this.options.api.namespace : undefined) as
      | T
      | undefined;
  }

  list(): readonly T[] {
    return this.informer.list() as unknown as readonly T[];
  }

  start(): void {
    void this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.informer.stop();
    await this.restarting;
  }

  /** One start of the informer: lists (unless it can resume from its resourceVersion), then watches. */
  private async run(): Promise<void> {
    this.failedSinceStart = false;
    try {
      await this.informer.start();
    } catch (error) {
      // client-node reports most failures through "error"; whatever escapes it is one too.
      this.failed(error);
      return;
    }
    if (this.failedSinceStart || this.abort.signal.aborted) return;
    this.backoff.reset();
    if (!this.hasSynced) {
      this.hasSynced = true;
      for (const resolve of this.syncWaiters.splice(0)) resolve();
    }
  }

  private failed(error: unknown): void {
    // Stopping aborts the watch, which reports an error too.
    if (this.abort.signal.aborted) return;
    this.failedSinceStart = true;
    const { logger, metrics, resource } = this.options;
    const waitMs = Math.max(this.backoff.next(), retryAfterMs(error));
    logger.warn(
      { err: error, resource: resource.plural, attempt: this.backoff.attempt, retryInMs: waitMs },
      "informer stopped; restarting it with backoff",
    );
    metrics.watchRestarts.inc({ source: resource.plural });
    const previous = this.restarting;
    this.restarting = (async () => {
      await previous;
      await delay(waitMs, undefined, { signal: this.abort.signal }).catch(() => undefined);
      if (!this.abort.signal.aborted) await this.run();
    })();
  }
}

/** What a 429 or 503 asked to wait, in milliseconds; 0 when it said nothing. */
function retryAfterMs(error: unknown): number {
  if (!(error instanceof ApiException)) return 0;
  const headers = error.headers as Record<string, string | undefined>;
  const seconds = Number(headers["retry-after"] ?? headers["Retry-After"]);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;
}
