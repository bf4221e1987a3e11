// The operator's copy of the platform's domains (every account's), which the reconciles read. Fed by
// DomainService.WatchDomains (the fast path; reopened with backoff whenever it ends) and by full lists
// (ListDomains, paged): when the stream asks for one, and every FULL_RESYNC_SECONDS whatever the stream
// does, so a missed change is repaired within that period.
import { setTimeout as delay } from "node:timers/promises";
import { equals } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { DomainSchema, type Domain } from "@qrplatform/api/links";
import type { Logger } from "@qrplatform/platform";
import { Backoff, type BackoffSettings } from "../backoff.js";
import type { OperatorMetrics } from "../metrics.js";
import type { DomainClient } from "./client.js";

export interface DomainCacheOptions {
  client: DomainClient;
  /** How often every domain is listed, whatever the stream says. */
  fullResyncMs: number;
  /** Between attempts to reopen the stream or to list again after a failure. */
  backoff: BackoffSettings;
  logger: Logger;
  metrics: OperatorMetrics;
  /** Hostnames whose domain appeared, changed or went (after a full list: every hostname known). */
  onChange: (hostnames: readonly string[]) => void;
  /** After every full list. */
  onListed?: () => void;
  /** Domains per ListDomains page. */
  pageSize?: number;
}

const LIST_PAGE_SIZE = 100;

export class DomainCache {
  private domains = new Map<string, Domain>();
  private idByHostname = new Map<string, string>();
  private listedOnce = false;
  /** While a full list runs: the changes heard meanwhile (null for a removal), applied over its result. */
  private heardDuringList: Map<string, Domain | null> | undefined;
  private lists: Promise<void> = Promise.resolve();
  private nextList: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private loops: Promise<void>[] = [];

  constructor(private readonly options: DomainCacheOptions) {}

  /** Whether every domain has been listed at least once: before that, an absent domain proves nothing. */
  get listed(): boolean {
    return this.listedOnce;
  }

  /** The live domain with this hostname. */
  forHostname(hostname: string): Domain | undefined {
    const id = this.idByHostname.get(hostname);
    return id === undefined ? undefined : this.domains.get(id);
  }

  /** Every live domain. */
  all(): Domain[] {
    return [...this.domains.values()];
  }

  /** Opens the stream and starts the periodic full list (the first one at once). */
  start(): void {
    this.loops = [this.watchLoop(), this.resyncLoop()];
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all(this.loops);
  }

  /**
   * Takes a domain the platform just answered with (after CreateDomain, VerifyDomain or
   * ReportDomainServing), unless what is held is newer.
   */
  remember(domain: Domain): void {
    this.heardDuringList?.set(domain.id, domain);
    if (this.put(domain)) this.options.onChange([domain.hostname]);
  }

  /** Drops a domain the platform just removed. */
  forget(domainId: string): void {
    this.heardDuringList?.set(domainId, null);
    const hostname = this.remove(domainId);
    if (hostname !== undefined) this.options.onChange([hostname]);
  }

  /**
   * Lists every domain after whatever list is running now (which may predate the caller's reason to
   * list). Callers that ask while one is waiting to start share it.
   */
  resync(): Promise<void> {
    if (this.nextList) return this.nextList;
    const run = this.lists.then(() => {
      this.nextList = undefined;
      return this.listAll();
    });
    this.nextList = run;
    this.lists = run.catch(() => undefined);
    return run;
  }

  private async watchLoop(): Promise<void> {
    const { client, logger, metrics } = this.options;
    const backoff = new Backoff(this.options.backoff);
    const signal = this.abort.signal;
    while (!signal.aborted) {
      try {
        // No deadline: the stream is meant to stay open.
        for await (const message of client.watchDomains({}, { signal, timeoutMs: 0 })) {
          backoff.reset();
          if (message.resync) await this.resync();
          for (const domain of message.changed) this.remember(domain);
          for (const removed of message.removed) this.forget(removed.domainId);
        }
        if (!signal.aborted) logger.info("the domain stream ended; reopening it");
      } catch (error) {
        if (signal.aborted) break;
        logger.warn(
          { err: error, attempt: backoff.attempt + 1 },
          "the domain stream failed; reopening it with backoff",
        );
      }
      if (signal.aborted) break;
      metrics.watchRestarts.inc({ source: "domains" });
      await this.sleep(backoff.next());
    }
  }

  private async resyncLoop(): Promise<void> {
    const backoff = new Backoff(this.options.backoff);
    const signal = this.abort.signal;
    while (!signal.aborted) {
      try {
        await this.resync();
        backoff.reset();
        await this.sleep(this.options.fullResyncMs);
      } catch (error) {
        if (signal.aborted) break;
        this.options.logger.warn(
          { err: error, attempt: backoff.attempt + 1 },
          "listing the platform's domains failed; retrying with backoff",
        );
        await this.sleep(backoff.next());
      }
    }
  }

  private async listAll(): Promise<void> {
    const { client, logger, metrics } = this.options;
    const heard = new Map<string, Domain | null>();
    this.heardDuringList = heard;
    const listed = new Map<string, Domain>();
    try {
      let pageToken = "";
      do {
        const page = await client.listDomains(
          { accountId: "", pageSize: this.options.pageSize ?? LIST_PAGE_SIZE, pageToken },
          { signal: this.abort.signal },
        );
        for (const domain of page.domains) listed.set(domain.id, domain);
        pageToken = page.nextPageToken;
      } while (pageToken !== "");
    } finally {
      this.heardDuringList = undefined;
    }
    // What the stream or our own calls told while the pages were read may be newer than the pages.
    for (const [id, domain] of heard) {
      if (domain === null) listed.delete(id);
      else if (!listed.has(id) || updated(domain) >= updated(listed.get(id)!)) listed.set(id, domain);
    }
    const hostnames = new Set([...this.domains.values(), ...listed.values()].map((domain) => domain.hostname));
    this.domains = listed;
    this.idByHostname = new Map([...listed.values()].map((domain) => [domain.hostname, domain.id]));
    this.listedOnce = true;
    metrics.lastFullResync.set(Date.now() / 1000);
    logger.debug({ domains: listed.size }, "listed the platform's domains");
    this.options.onChange([...hostnames]);
    this.options.onListed?.();
  }

  /** Stores a domain unless the one held is newer; whether anything changed. */
  private put(domain: Domain): boolean {
    const held = this.domains.get(domain.id);
    if (held && (updated(held) > updated(domain) || equals(DomainSchema, held, domain))) return false;
    this.domains.set(domain.id, domain);
    this.idByHostname.set(domain.hostname, domain.id);
    return true;
  }

  /** Removes a domain; its hostname, if it was held. */
  private remove(domainId: string): string | undefined {
    const held = this.domains.get(domainId);
    if (!held) return undefined;
    this.domains.delete(domainId);
    if (this.idByHostname.get(held.hostname) === domainId) this.idByHostname.delete(held.hostname);
    return held.hostname;
  }

  private async sleep(ms: number): Promise<void> {
    await delay(ms, undefined, { signal: this.abort.signal }).catch(() => undefined);
  }
}

function updated(domain: Domain): number {
  return millis(domain.updateTime);
}

function millis(timestamp: Timestamp | undefined): number {
  return timestamp ? timestampDate(timestamp).getTime() : 0;
}
