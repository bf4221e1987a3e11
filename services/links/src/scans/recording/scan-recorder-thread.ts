import type { IncomingMessage } from "node:http";
import { Worker } from "node:worker_threads";
import type { ThreadConnection } from "@qrplatform/db";
import { noMetrics, withSpanFrom, workerEntry, workerExecArgv, type Logger, type Metrics } from "@qrplatform/platform";
import type { Counter } from "prom-client";
import type { RedirectTarget } from "../../redirects/redirector.js";
import { captureRedirect, emptyCapture, type CapturedRedirects } from "./capture.js";
import type { ScanFacts } from "./classify.js";
import {
  scanRecorderMetrics,
  type DropReason,
  type RecorderSettings,
  type RecorderStatus,
  type RedirectRecorder,
  type ScanRoute,
} from "./scan-recorder.js";

// The answering thread's half of recording on a thread of its own (ADR 0014): a redirect only
// appends a few of its fields to columns (capture.ts), which go to the recording thread every few
// milliseconds; that thread runs the same ScanRecorder as the answering thread would
// (scan-recorder-worker.ts), and this one mirrors where it stands.

/**
 * Where the recording thread stores its batches, and what this thread's links service does once one is
 * stored (LinksModule's method of the same name); the recording thread waits for it before it goes on,
 * as RecordScans's caller waits for the answer.
 */
export interface RecorderThreadStorage {
  /**
   * The database as the recording thread opens it (`Database.connectionForThread`): asked each time a
   * thread starts, since a port to PGlite's thread ends with the thread it was given to.
   */
  connection(): ThreadConnection;
  announceStoredScans(linkIds: readonly string[]): Promise<void>;
}

/** What the recording thread was started with. */
export interface RecorderThreadSettings extends RecorderSettings {
  connection: ThreadConnection;
  logLevel: string;
}

/** Where the recording thread stands, sent when it changed: after each hand-over the thread takes, and every 50 ms. */
export interface RecorderThreadStatus extends RecorderStatus {
  /** Redirects received from the request thread since the thread started. */
  received: number;
}

/** What the recording thread asks of the request thread, answered by id: announce the links of a batch it stored. */
export type RecorderThreadRequest = { kind: "announce"; linkIds: string[] };
/** The answer to request `id`: done. */
export type RecorderThreadAnswer = { kind: "answer"; id: number };

export type ToRecorderThread =
  | { kind: "redirects"; redirects: CapturedRedirects }
  | RecorderThreadAnswer
  | { kind: "close"; timeoutMs: number };
export type FromRecorderThread =
  | { kind: "status"; status: RecorderThreadStatus }
  /** `trace`: the recording thread's trace context (its "record scans" span), which the request thread's work joins. */
  | { kind: "request"; id: number; request: RecorderThreadRequest; trace: Record<string, string> }
  | { kind: "closed"; status: RecorderThreadStatus };

/** The recording thread's entry, beside this file. */
const WORKER_FILE = workerEntry("scan-recorder-worker", import.meta.url);

/** How often captured redirects go to the recording thread, and how many go at once at most. */
const HAND_OVER_INTERVAL_MS = 20;
const HAND_OVER_SIZE = 1000;
/** Redirects waiting in this thread, in flight and in the recording thread, past which new ones are dropped. */
const MAX_PENDING = 200_000;
/** How long after a failure a new recording thread starts. */
const RESTART_DELAY_MS = 1000;

export interface ScanRecorderThreadOptions extends RecorderSettings {
  storage: RecorderThreadStorage;
  logger: Logger;
  metrics?: Metrics | undefined;
}

function startingStatus(): RecorderThreadStatus {
  return {
    received: 0,
    pending: 0,
    recorded: 0,
    spooled: 0,
    stored: 0,
    dropped: { buffer_full: 0, refused: 0, unclassifiable: 0, thread_failed: 0, expired: 0 },
    oldestUnstoredAt: undefined,
  };
}

/**
 * Records scans on a thread of its own. The request thread keeps a redirect's link, time, peer address
 * and the four headers classifying reads, in columns, and hands them over every HAND_OVER_INTERVAL_MS;
 * the recording thread runs a ScanRecorder (classifying, storing, spooling) with every promise that
 * recorder makes. The request thread's part is brief, and what it keeps is gone within the hand-over
 * interval; the recording thread stores through a connection of its own (to the PostgreSQL server, or a
 * session of PGlite's thread), so a backlog waits in its heap, not in the one whose collections stall
 * the answers. A hard kill loses what waits in memory, at most a flush interval and a hand-over.
 * Should the thread fail, what it held is counted dropped (thread_failed) and a new one starts,
 * replaying the spool.
 */
export class ScanRecorderThread implements RedirectRecorder {
  private worker: Worker | undefined;
  /** Resolves once the current thread has ended, whyever it did. */
  private workerExited: Promise<unknown> = Promise.resolve();
  private capture = emptyCapture();
  private handOverTimer: NodeJS.Timeout | undefined;
  /** Redirects handed over to the current thread, and the oldest time of each hand-over it has not received yet. */
  private handedOver = 0;
  private readonly inFlight: { upTo: number; oldestAt: number }[] = [];
  private status = startingStatus();
  /** Scans recorded by threads that failed, so `recorded` never goes back. */
  private recordedEarlier = 0;
  private readonly storedTotal: Counter;
  private readonly droppedTotal: Counter<"reason">;
  private closing: Promise<void> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private closed: ((status: RecorderThreadStatus) => void) | undefined;

  /** The country header's name as Node keys it. */
  private readonly countryHeader: string | undefined;

  constructor(private readonly options: ScanRecorderThreadOptions) {
    this.countryHeader = options.countryHeader?.toLowerCase();
    ({ stored: this.storedTotal, dropped: this.droppedTotal } = scanRecorderMetrics(
      options.metrics ?? noMetrics,
      this,
    ));
    this.start();
  }

  recordRedirect(req: IncomingMessage, target: RedirectTarget, facts?: ScanFacts, route?: ScanRoute): void {
    if (req.method !== "GET" || this.closing) return;
    if (this.pending >= MAX_PENDING) {
      this.drop("buffer_full", 1);
      return;
    }
    const { capture } = this;
    captureRedirect(capture, req, target.linkId, Date.now(), this.countryHeader, facts, route);
    if (capture.linkId.length >= HAND_OVER_SIZE) this.handOver();
    else this.handOverTimer ??= setTimeout(() => this.handOver(), HAND_OVER_INTERVAL_MS);
  }

  get pending(): number {
    return this.capture.linkId.length + (this.handedOver - this.status.received) + this.status.pending;
  }

  get recorded(): number {
    return this.recordedEarlier + this.status.recorded;
  }

  get spooledScans(): number {
    return this.status.spooled;
  }

  get oldestUnstoredAgeMs(): number {
    const times = [this.capture.at[0], this.inFlight[0]?.oldestAt, this.status.oldestUnstoredAt].filter(
      (time) => time !== undefined,
    );
    return times.length === 0 ? 0 : Math.max(0, Date.now() - Math.min(...times));
  }

  /** Hands over what waits, asks the thread to store or spool everything within `timeoutMs`, and ends it. */
  close(timeoutMs = 10_000): Promise<void> {
    this.closing ??= (async () => {
      clearTimeout(this.restartTimer);
      const worker = this.worker;
      if (!worker) {
        // Between a failed thread and the next: what waits here cannot be stored any more.
        if (this.pending > 0)
          this.options.logger.error({ lost: this.pending }, "shutting down with scans that could not be stored");
        return;
      }
      this.handOver();
      const closed = new Promise<RecorderThreadStatus>((resolve) => (this.closed = resolve));
      worker.postMessage({ kind: "close", timeoutMs } satisfies ToRecorderThread);
      // The thread gives up at the timeout itself; past a little more, it is not answering at all.
      const timer = setTimeout(() => this.closed?.(this.status), timeoutMs + 2000);
      const status = await closed;
      clearTimeout(timer);
      this.update(status);
      this.worker = undefined;
      // It ends by itself once closed (or has already failed); one that does not answer is stopped.
      const stopping = setTimeout(() => void worker.terminate(), 1000);
      await this.workerExited;
      clearTimeout(stopping);
      if (this.pending > 0)
        this.options.logger.error({ lost: this.pending }, "shutting down with scans that could not be stored");
    })();
    return this.closing;
  }

  private start(): void {
    const { storage } = this.options;
    const connection = storage.connection();
    const { visitorKeySecret, trustedProxies, spoolDir, flushIntervalMs } = this.options;
    const settings: RecorderThreadSettings = {
      connection,
      visitorKeySecret,
      trustedProxies,
      countryHeader: this.countryHeader,
      spoolDir,
      flushIntervalMs,
      logLevel: this.options.logger.level,
    };
    const worker = new Worker(WORKER_FILE, {
      workerData: settings,
      transferList: connection.pglitePort ? [connection.pglitePort] : [],
      execArgv: workerExecArgv(WORKER_FILE),
    });
    this.worker = worker;
    this.workerExited = new Promise((resolve) => worker.once("exit", resolve));
    this.handedOver = 0;
    this.inFlight.length = 0;
    worker.on("message", (message: FromRecorderThread) => this.receive(worker, message));
    worker.on("error", (error) => this.options.logger.error({ err: error }, "the scan recording thread failed"));
    worker.on("exit", (code) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.failed(code);
    });
  }

  private receive(worker: Worker, message: FromRecorderThread): void {
    if (message.kind === "request") {
      const { request } = message;
      void withSpanFrom(message.trace, `${request.kind} scans`, () => this.announce(request.linkIds)).then(() =>
        worker.postMessage({ kind: "answer", id: message.id } satisfies ToRecorderThread),
      );
      return;
    }
    this.update(message.status);
    if (message.kind === "closed") this.closed?.(message.status);
  }

  private async announce(linkIds: string[]): Promise<void> {
    const { storage, logger } = this.options;
    // The scans are stored whatever happens here; only catalogs' cached totals would wait for their expiry.
    await storage
      .announceStoredScans(linkIds)
      .catch((error: unknown) => logger.warn({ err: error }, "could not announce stored scans"));
  }

  private update(status: RecorderThreadStatus): void {
    this.storedTotal.inc(status.stored - this.status.stored);
    for (const reason of Object.keys(status.dropped) as DropReason[]) {
      const added = status.dropped[reason] - this.status.dropped[reason];
      if (added > 0) this.droppedTotal.inc({ reason }, added);
    }
    this.status = status;
    while (this.inFlight.length > 0 && this.inFlight[0]!.upTo <= status.received) this.inFlight.shift();
  }

  private handOver(): void {
    clearTimeout(this.handOverTimer);
    this.handOverTimer = undefined;
    const { capture } = this;
    if (capture.linkId.length === 0 || !this.worker) return;
    this.capture = emptyCapture();
    this.handedOver += capture.linkId.length;
    this.inFlight.push({ upTo: this.handedOver, oldestAt: capture.at[0]! });
    this.worker.postMessage({ kind: "redirects", redirects: capture } satisfies ToRecorderThread);
  }

  /** The thread ended on its own: what it held is lost; a new one replays the spool. */
  private failed(code: number): void {
    const lost = this.handedOver - this.status.received + this.status.pending;
    this.options.logger.error({ code, lost }, "the scan recording thread stopped; starting another");
    this.recordedEarlier += this.status.recorded;
    // The next thread counts from zero.
    this.status = startingStatus();
    this.drop("thread_failed", lost);
    this.handedOver = 0;
    this.inFlight.length = 0;
    if (this.closing) {
      this.closed?.(this.status);
      return;
    }
    this.restartTimer = setTimeout(() => {
      this.start();
      this.handOver();
    }, RESTART_DELAY_MS);
  }

  private drop(reason: DropReason, scans: number): void {
    if (scans > 0) this.droppedTotal.inc({ reason }, scans);
  }
}
