import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { RedirectService, ScanSchema, type Scan } from "@qrplatform/api/links";
import type { Logger } from "@qrplatform/platform";
import type { RedirectTarget } from "../redirects/redirector.js";
import { visitorKey, type ScanFacts } from "./classify.js";

/** How often buffered scans are sent: what a hard kill can lose at most while Postgres is up. */
export const FLUSH_INTERVAL_MS = 250;
/** Scans per RecordScans call. */
const BATCH_SIZE = 1000;
/** Scans kept while they cannot be stored; past this, new scans are dropped and counted in the log. */
const MAX_BUFFERED = 200_000;
const MAX_RETRY_DELAY_MS = 5000;

/** Where batches go: RecordScans, in-process or over gRPC. Resolves once they are committed. */
export type SendScans = (scans: Scan[]) => Promise<void>;

export function sendVia(transport: Transport): SendScans {
  const client = createClient(RedirectService, transport);
  return async (scans) => {
    await client.recordScans({ scans });
  };
}

export interface ScanRecorderOptions {
  send: SendScans;
  classify: (req: IncomingMessage) => ScanFacts;
  /** Salts visitor keys; changing it makes every visitor new. */
  visitorKeySecret: string;
  logger: Logger;
  flushIntervalMs?: number;
  now?: () => Date;
}

/**
 * Records scans off the request path: a redirect only appends to a buffer, and a timer sends the
 * buffer in batches. A batch leaves the buffer only once it is committed, so a failed send (the links
 * service or Postgres restarting) is retried, with backoff, until it succeeds; scan ids make a retried
 * batch count once. `close` sends everything left before the process exits.
 */
export class ScanRecorder {
  private readonly buffer: Scan[] = [];
  private readonly flushIntervalMs: number;
  private readonly now: () => Date;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private failures = 0;
  private dropped = 0;

  constructor(private readonly options: ScanRecorderOptions) {
    this.flushIntervalMs = options.flushIntervalMs ?? FLUSH_INTERVAL_MS;
    this.now = options.now ?? (() => new Date());
  }

  /** Counts a redirect answered with a 302, unless it is not a scan: HEAD, or a bot or link preview. */
  recordRedirect(req: IncomingMessage, target: RedirectTarget): void {
    if (req.method !== "GET") return;
    const facts = this.options.classify(req);
    if (facts.automated) return;
    if (this.buffer.length >= MAX_BUFFERED) {
      if (this.dropped++ % 10_000 === 0) this.options.logger.error({ dropped: this.dropped }, "scan buffer is full: dropping scans");
      return;
    }
    this.buffer.push(
      create(ScanSchema, {
        id: randomUUID(),
        linkId: target.linkId,
        scanTime: timestampFromDate(this.now()),
        country: facts.country,
        deviceType: facts.deviceType,
        os: facts.os,
        browser: facts.browser,
        referrerHost: facts.referrerHost,
        visitorKey: visitorKey(this.options.visitorKeySecret, target.linkId, facts),
      }),
    );
    // While sends fail, the retry timer alone decides when to try again.
    this.schedule(this.buffer.length >= BATCH_SIZE && this.failures === 0 ? 0 : this.flushIntervalMs);
  }

  /** Scans waiting to be stored. */
  get pending(): number {
    return this.buffer.length;
  }

  /** Sends every buffered scan, retrying until `deadline`; what is still unsent then is logged as lost. */
  async close(timeoutMs = 10_000): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const deadline = Date.now() + timeoutMs;
    while (this.buffer.length > 0 && Date.now() < deadline) {
      await this.flush();
      if (this.buffer.length > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(this.retryDelay(), deadline - Date.now())));
    }
    if (this.buffer.length > 0) this.options.logger.error({ lost: this.buffer.length }, "shutting down with scans that could not be stored");
  }

  private schedule(delayMs: number): void {
    if (this.flushing) return;
    if (this.timer !== undefined) {
      // A full batch goes now rather than at the end of the interval.
      if (delayMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush().then(() => {
        if (this.buffer.length > 0) this.schedule(this.failures > 0 ? this.retryDelay() : this.buffer.length >= BATCH_SIZE ? 0 : this.flushIntervalMs);
      });
    }, delayMs);
  }

  private retryDelay(): number {
    return Math.min(MAX_RETRY_DELAY_MS, this.flushIntervalMs * 2 ** Math.min(this.failures, 10));
  }

  /** Sends batches until the buffer is empty or a send fails; one flush at a time. */
  private flush(): Promise<void> {
    this.flushing ??= (async () => {
      try {
        while (this.buffer.length > 0) {
          const batch = this.buffer.slice(0, BATCH_SIZE);
          try {
            await this.options.send(batch);
          } catch (error) {
            if (error instanceof ConnectError && error.code === Code.InvalidArgument) {
              // Retrying cannot help a batch the service refuses; keeping it would block every later scan.
              this.options.logger.error({ err: error, scans: batch.length }, "dropping a batch of scans the links service refused");
            } else {
              if (this.failures++ === 0) this.options.logger.warn({ err: error, pending: this.buffer.length }, "cannot store scans yet; retrying");
              return;
            }
          }
          this.buffer.splice(0, batch.length);
          if (this.failures > 0) this.options.logger.info({ pending: this.buffer.length }, "storing scans again");
          this.failures = 0;
        }
      } finally {
        this.flushing = undefined;
      }
    })();
    return this.flushing;
  }
}
