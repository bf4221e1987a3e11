import type { IncomingMessage } from "node:http";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { RedirectService } from "@qrplatform/api/links";
import { noMetrics, withSpan, type Logger, type Metrics } from "@qrplatform/platform";
import type { Counter } from "prom-client";
import type { RedirectTarget } from "../../redirects/redirector.js";
import { scanClassifier, visitorKey, type ClassifiedRequest, type ScanFacts } from "./classify.js";
import { openCountryDatabase } from "./country.js";
import {
  dropFirstScans,
  emptyScanColumns,
  MAX_SCANS_PER_BATCH,
  NO_VARIANT,
  scansOf,
  sliceScanColumns,
  type ScanColumns,
} from "../scan-columns.js";
import { timeOrderedScanId } from "./scan-id.js";
import { ScanSpool } from "./scan-spool.js";

/** How often buffered scans are sent (or spooled while sends fail): what a hard kill can lose at most. */
const FLUSH_INTERVAL_MS = 250;
/** Scans that make a flush start at once rather than at the interval. */
const BATCH_SIZE = 1000;
/**
 * Scans per RecordScans call at most: what waits goes in as few calls as that allows, so a backlog
 * (storage slower for a while than redirects come) is caught up with in fewer round trips.
 */
const MAX_BATCH_SIZE = MAX_SCANS_PER_BATCH;
/**
 * Scans left waiting in memory after a batch is stored, past which storing is taken to be slower than
 * scans come for good (a database at its limit) and what waits moves to the spool: about a second of
 * the most redirects one process answers here. Well above what waits behind one slow batch: spooling
 * costs more than storing from memory, and on the answering thread it would take the time that holds
 * answering back to the pace storing keeps (ADR 0014).
 */
const MAX_BACKLOG_IN_MEMORY = 10 * MAX_BATCH_SIZE;
/** What an operation on the spool answers when the disk fails it. */
const DISK_FAILED = Symbol("the spool's disk failed");
/** Scans kept in memory while they can be neither stored nor spooled; past this, new scans are dropped and logged. */
const MAX_BUFFERED = 200_000;
const MAX_RETRY_DELAY_MS = 5000;
/**
 * Redirects classified in one turn of the event loop: those the turns before answered, at least
 * CLASSIFY_CHUNK (a fraction of a millisecond, so requests waiting meanwhile are hardly held up), and a
 * quarter of what waits when more do, up to MAX_CLASSIFY_CHUNK (several milliseconds). So classifying
 * keeps pace with answering unless one turn answers more redirects than that; past it, scans wait (up
 * to MAX_BUFFERED).
 */
const CLASSIFY_CHUNK = 50;
const MAX_CLASSIFY_CHUNK = 1000;

/**
 * Where batches go, as the recorder built them (columns of scans that keep the scan rules, since
 * classifying makes them so): the links service of this process, or RecordScans. Resolves once they
 * are committed.
 */
export type SendScans = (scans: ScanColumns) => Promise<unknown>;

/** RecordScans over `transport`, for a recorder in a process the links service does not run in. */
export function sendVia(transport: Transport): SendScans {
  const client = createClient(RedirectService, transport);
  return async (scans) => {
    await client.recordScans({ scans: scansOf(scans) });
  };
}

export interface ScanRecorderOptions {
  send: SendScans;
  classify: (req: ClassifiedRequest) => ScanFacts;
  /** Salts visitor keys; changing it makes every visitor new. */
  visitorKeySecret: string;
  /** Where batches wait on disk while they cannot be stored; without it they wait in memory. */
  spool?: ScanSpool | undefined;
  logger: Logger;
  flushIntervalMs?: number | undefined;
  now?: () => Date;
  /** Where the scans' way to the database is reported: buffered, spooled, stored, dropped, and the oldest's age. */
  metrics?: Metrics | undefined;
}

/**
 * What the answering thread records scans with, wherever the ScanRecorder runs (placement.ts): the
 * recorder itself on this thread, or ScanRecorderThread in front of one on a thread of its own.
 */
export interface RedirectRecorder {
  /**
   * Counts a redirect answered with a 302 unless it turns out not to be a scan (HEAD, a bot, a link
   * preview); `facts`, when the redirect path already classified the request, are taken as they are,
   * and `route` is the rule (and variant) that decided it, for analytics per rule.
   */
  recordRedirect(req: IncomingMessage, target: RedirectTarget, facts?: ScanFacts, route?: ScanRoute): void;
  /** Redirects and scans waiting in memory to be stored. */
  readonly pending: number;
  /** Scans waiting on disk (the spool) to be stored. */
  readonly spooledScans: number;
  /** Scans taken since the recorder started: each is stored exactly once, or spooled, or reported dropped. */
  readonly recorded: number;
  /** How long the oldest scan not stored yet has waited, in milliseconds; 0 when none waits. */
  readonly oldestUnstoredAgeMs: number;
  /** Stores (or spools) everything that waits; call once no more redirects come. */
  close(timeoutMs?: number): Promise<void>;
}

/** Why scans were given up (qrp_scans_dropped_total's reasons). */
export type DropReason = "buffer_full" | "refused" | "unclassifiable" | "thread_failed" | "expired";

/** Where a ScanRecorder stands, as a thread in front of it mirrors it. */
export interface RecorderStatus {
  pending: number;
  recorded: number;
  spooled: number;
  stored: number;
  dropped: Record<DropReason, number>;
  /** When the oldest scan not stored yet was made (Unix ms), if any. */
  oldestUnstoredAt: number | undefined;
}

/**
 * What a ScanRecorder is opened with, the same in either placement: plain values, so they cross to a
 * recording thread as they are.
 */
export interface RecorderSettings {
  /** Salts visitor keys; changing it makes every visitor new. */
  visitorKeySecret: string;
  /** Proxies whose X-Forwarded-For (and country header) is believed; see scanClassifier. */
  trustedProxies: readonly string[];
  /** A trusted proxy's country header, such as "cf-ipcountry"; the bundled database otherwise. */
  countryHeader?: string | undefined;
  /** Where scans wait on disk while they cannot be stored; in memory when unset. */
  spoolDir?: string | undefined;
  flushIntervalMs?: number | undefined;
}

/** Opens a ScanRecorder with its classifier, the country database and the spool, sending batches with `send`. */
export async function openScanRecorder(
  settings: RecorderSettings,
  context: { send: SendScans; logger: Logger; metrics?: Metrics | undefined },
): Promise<ScanRecorder> {
  return new ScanRecorder({
    ...context,
    classify: scanClassifier({
      trustedProxies: settings.trustedProxies,
      countryHeader: settings.countryHeader,
      countryOf: await openCountryDatabase(),
    }),
    visitorKeySecret: settings.visitorKeySecret,
    spool: settings.spoolDir === undefined ? undefined : new ScanSpool(settings.spoolDir),
    flushIntervalMs: settings.flushIntervalMs,
  });
}

/** qrp_scans_dropped_total, which recorders and the links service's own ScanWriter add to. */
export function scansDroppedCounter(metrics: Metrics): Counter<"reason"> {
  return metrics.counter({
    name: "qrp_scans_dropped_total",
    help:
      "Scans given up, by reason: buffer_full (neither stored nor spooled for long), refused (a batch the links service rejected), " +
      "unclassifiable (a request the classifier failed on), thread_failed (taken by a recording thread that failed before storing them), " +
      "expired (made before the raw window, SCAN_RETENTION_DAYS, or past its partitions ahead: past deduplication, so not stored).",
    labelNames: ["reason"],
  });
}

/**
 * The scans' way to the database as Prometheus reads it, whichever thread records them: counters the
 * recorder adds to, and gauges read from `recorder` on each scrape.
 */
export function scanRecorderMetrics(
  metrics: Metrics,
  recorder: Pick<RedirectRecorder, "pending" | "spooledScans" | "oldestUnstoredAgeMs">,
): { stored: Counter; dropped: Counter<"reason"> } {
  const stored = metrics.counter({ name: "qrp_scans_stored_total", help: "Scans committed to the database." });
  const dropped = scansDroppedCounter(metrics);
  metrics.gaugeOnScrape({ name: "qrp_scans_buffered", help: "Scans waiting in memory to be stored." }, (gauge) =>
    gauge.set(recorder.pending),
  );
  metrics.gaugeOnScrape(
    { name: "qrp_scans_spooled", help: "Scans waiting on disk (SCAN_SPOOL_DIR) to be stored." },
    (gauge) => gauge.set(recorder.spooledScans),
  );
  // Zero when nothing waits: an alert on this age fires when scans stop reaching the database.
  metrics.gaugeOnScrape(
    {
      name: "qrp_scan_oldest_unstored_age_seconds",
      help: "Age of the oldest scan not yet stored (buffered or spooled), in seconds; 0 when none waits.",
    },
    (gauge) => gauge.set(recorder.oldestUnstoredAgeMs / 1000),
  );
  return { stored, dropped };
}

/** The routing rule that decided a redirect, and the variant when it is a split rule. */
export interface ScanRoute {
  ruleId: string;
  /** The 0-based index of the variant; undefined for a rule with one destination. */
  variant?: number | undefined;
}

/** A redirect as it was answered, kept until the next flush classifies it. */
export interface Redirect {
  linkId: string;
  /** When it was answered, in Unix milliseconds: the scan's time. */
  at: number;
  request: ClassifiedRequest;
  /** Its classification, when the answering thread already made it (links with routing). */
  facts?: ScanFacts;
  /** The rule that decided it; absent when none did. */
  route?: ScanRoute;
}

/**
 * Records scans off the request path: a redirect only keeps its link, time, peer address and
 * headers; the next turn of the event loop classifies what the turns before kept, into columns of
 * scans, and a timer sends them in batches. Classified together rather than each inside its
 * request's callback, a recorded redirect costs the redirect process about a quarter less CPU, since
 * the classifier's caches stay warm; in the next turn rather than at the flush, its headers die young
 * (ADR 0014). A batch is forgotten only once it is committed, so a failed send (the links service or
 * Postgres restarting) is retried, with backoff, until it succeeds; scan ids make a retried batch
 * count once. While sends fail, each interval's scans move to the spool on disk, so a hard kill
 * loses at most one flush interval of scans; spooled batches, older, are sent first, also after a
 * restart. While sends succeed but fall behind (more than MAX_BACKLOG_IN_MEMORY scans wait once a
 * batch is stored), what waits moves to the spool too: memory holds no long backlog for a hard kill to
 * lose, and a load the database cannot keep up with for minutes fills the disk, not MAX_BUFFERED.
 * `close` sends everything left, or spools it, before the process exits. The one recorder of a
 * process, whichever thread runs it (placement.ts): on the answering thread it takes redirects through
 * `recordRedirect`, on a recording thread through `take`.
 */
export class ScanRecorder implements RedirectRecorder {
  /** Redirects not classified yet, in the order they were answered; all of them are newer than the buffer's scans. */
  private readonly redirects: Redirect[] = [];
  /**
   * Scans classified, each with its id for good, in the order they came: columns from the start, so a
   * batch goes to the statement without being built again, and a batch in memory is eleven arrays
   * rather than thousands of objects for the garbage collector to copy (ADR 0014).
   */
  private readonly buffer: ScanColumns = emptyScanColumns();
  private readonly flushIntervalMs: number;
  private readonly now: () => Date;
  private readonly spool: ScanSpool | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Whether a turn that classifies what waits is due (classifySoon). */
  private classifying = false;
  private flushing: Promise<void> | undefined;
  /** Whether the spool may hold batches; true at start, so batches of an earlier run are replayed. */
  private spooled: boolean;
  private failures = 0;
  /** Whether storing has fallen behind and the backlog goes to the spool: said once in the log each time. */
  private behind = false;
  /** Whether the spool's disk failed the last operation on it (full or read-only, say): said once in the log each time. */
  private spoolFailing = false;
  private nextAttemptAt = 0;
  private taken = 0;
  /** Scans committed, and scans given up by reason, since the recorder started. */
  readonly counts = {
    stored: 0,
    dropped: { buffer_full: 0, refused: 0, unclassifiable: 0, thread_failed: 0, expired: 0 } satisfies Record<
      DropReason,
      number
    >,
  };
  private readonly stored: Counter;
  private readonly lost: Counter<"reason">;

  constructor(private readonly options: ScanRecorderOptions) {
    this.flushIntervalMs = options.flushIntervalMs ?? FLUSH_INTERVAL_MS;
    this.now = options.now ?? (() => new Date());
    this.spool = options.spool;
    ({ stored: this.stored, dropped: this.lost } = scanRecorderMetrics(options.metrics ?? noMetrics, this));
    this.spooled = this.spool !== undefined;
    if (this.spooled) this.schedule(0);
  }

  /**
   * Counts a redirect answered with a 302, unless it is not a scan: HEAD, or (once classified) a bot or
   * link preview. Keeps only what classifying it reads; the socket's address is read now, while the
   * socket is open.
   */
  recordRedirect(req: IncomingMessage, target: RedirectTarget, facts?: ScanFacts, route?: ScanRoute): void {
    if (req.method !== "GET") return;
    this.take({
      linkId: target.linkId,
      at: this.now().getTime(),
      request: { socket: { remoteAddress: req.socket.remoteAddress }, headers: req.headers },
      ...(facts !== undefined && { facts }),
      ...(route !== undefined && { route }),
    });
  }

  /** Keeps a redirect answered with a 302 to a GET until the next turn of the event loop classifies it. */
  take(redirect: Redirect): void {
    if (this.pending >= MAX_BUFFERED) {
      this.drop("buffer_full", 1);
      if (this.counts.dropped.buffer_full % 10_000 === 1) {
        this.options.logger.error({ dropped: this.counts.dropped.buffer_full }, "scan buffer is full: dropping scans");
      }
      return;
    }
    this.redirects.push(redirect);
    this.classifySoon();
    // While sends fail, the interval alone decides: a full batch must not hammer a service that is down.
    this.schedule(this.pending >= BATCH_SIZE && this.failures === 0 ? 0 : this.flushIntervalMs);
  }

  /**
   * Classifies the redirects answered until now in the next turn of the event loop (a chunk of them,
   * then the next chunk in the turn after), whether or not a batch is being stored: a redirect's
   * headers are let go of within a turn or two, as young garbage, instead of waiting for a flush
   * behind a batch in flight, long enough to be copied by the garbage collector twice and promoted
   * (ADR 0014).
   */
  private classifySoon(): void {
    if (this.classifying) return;
    this.classifying = true;
    setImmediate(() => {
      this.classifying = false;
      this.classifyChunk();
      if (this.redirects.length > 0) this.classifySoon();
    });
  }

  private classifyChunk(): number {
    const chunk = Math.min(
      this.redirects.length,
      MAX_CLASSIFY_CHUNK,
      Math.max(CLASSIFY_CHUNK, Math.ceil(this.redirects.length / 4)),
    );
    for (const redirect of this.redirects.splice(0, chunk)) this.classifyRedirect(redirect);
    return chunk;
  }

  /**
   * Turns every redirect kept until now into scans (bots and link previews left out), a chunk per turn;
   * those answered meanwhile are left to classifySoon.
   */
  private async classifyRedirects(): Promise<void> {
    for (let left = this.redirects.length; left > 0 && this.redirects.length > 0; ) {
      left -= this.classifyChunk();
      if (left > 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private classifyRedirect({ linkId, at, request, facts: classified, route }: Redirect): void {
    let facts: ScanFacts;
    try {
      facts = classified ?? this.options.classify(request);
    } catch (error) {
      // One request the classifier cannot read must not hold back every scan after it.
      this.drop("unclassifiable", 1);
      this.options.logger.error({ err: error, linkId }, "could not classify a scan; dropping it");
      return;
    }
    if (facts.automated) return;
    this.taken++;
    const buffer = this.buffer;
    buffer.id.push(timeOrderedScanId(at));
    buffer.linkId.push(linkId);
    buffer.scannedAtMs.push(at);
    buffer.country.push(facts.country);
    buffer.deviceType.push(facts.deviceType);
    buffer.os.push(facts.os);
    buffer.browser.push(facts.browser);
    buffer.referrerHost.push(facts.referrerHost);
    buffer.visitorKey.push(visitorKey(this.options.visitorKeySecret, linkId, facts));
    buffer.ruleId.push(route?.ruleId ?? "");
    buffer.variant.push(route?.variant ?? NO_VARIANT);
  }

  /** Redirects and scans waiting in memory to be stored (redirects not classified yet may still turn out to be bots). */
  get pending(): number {
    return this.redirects.length + this.buffer.id.length;
  }

  /**
   * Scans taken since the recorder started, counted as they are classified: each is
   * stored exactly once, or spooled, or reported dropped.
   */
  get recorded(): number {
    return this.taken;
  }

  /** Scans waiting on disk to be stored (those of an earlier run once they are read). */
  get spooledScans(): number {
    return this.spool?.scans ?? 0;
  }

  /** How long the oldest scan not stored yet (in memory or spooled) has waited, in milliseconds; 0 when none waits. */
  get oldestUnstoredAgeMs(): number {
    const oldest = this.oldestUnstoredTime();
    return oldest === undefined ? 0 : Math.max(0, this.now().getTime() - oldest);
  }

  /** Where it stands, for a thread in front of it. */
  status(): RecorderStatus {
    return {
      pending: this.pending,
      recorded: this.taken,
      spooled: this.spooledScans,
      stored: this.counts.stored,
      dropped: { ...this.counts.dropped },
      oldestUnstoredAt: this.oldestUnstoredTime(),
    };
  }

  /** When the oldest scan waiting in memory or on disk was made, in Unix milliseconds; the buffer, then the redirects, are in the order scans came. */
  private oldestUnstoredTime(): number | undefined {
    const spooled = this.spool?.oldestScanTime;
    const buffered = this.buffer.scannedAtMs[0] ?? this.redirects[0]?.at;
    if (spooled === undefined) return buffered;
    return buffered === undefined ? spooled : Math.min(spooled, buffered);
  }

  /** Sends every buffered and spooled scan, retrying until the timeout; what is left then is spooled, or logged as lost. */
  async close(timeoutMs = 10_000): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const deadline = Date.now() + timeoutMs;
    await this.flushing;
    while ((this.pending > 0 || this.spooled) && Date.now() < deadline) {
      this.nextAttemptAt = 0;
      await this.flush();
      if (this.failures > 0)
        await new Promise((resolve) =>
          setTimeout(resolve, Math.max(0, Math.min(this.retryDelay(), deadline - Date.now()))),
        );
    }
    await this.spill();
    if (this.pending > 0)
      this.options.logger.error({ lost: this.pending }, "shutting down with scans that could not be stored");
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
        if (this.pending > 0 || this.spooled)
          this.schedule(this.pending >= BATCH_SIZE && this.failures === 0 ? 0 : this.flushIntervalMs);
      });
    }, delayMs);
  }

  private retryDelay(): number {
    return Math.min(MAX_RETRY_DELAY_MS, this.flushIntervalMs * 2 ** Math.min(this.failures, 10));
  }

  /** One round, never two at once: send what waits (spooled first) unless backing off, and spool what could not go. */
  private flush(): Promise<void> {
    this.flushing ??= (async () => {
      try {
        await this.classifyRedirects();
        if (this.failures > 0 && Date.now() < this.nextAttemptAt) return;
        try {
          await this.sendSpooled();
          await this.sendBuffered();
          if (this.failures > 0) this.options.logger.info({ pending: this.pending }, "storing scans again");
          this.failures = 0;
        } catch (error) {
          if (this.failures++ === 0)
            this.options.logger.warn({ err: error, pending: this.pending }, "cannot store scans yet; retrying");
          this.nextAttemptAt = Date.now() + this.retryDelay();
        }
      } finally {
        // While sends fail, the buffer goes to disk, so a hard kill finds it there.
        if (this.failures > 0) await this.spill();
        this.flushing = undefined;
      }
    })();
    return this.flushing;
  }

  /**
   * Sends the spooled batches, oldest first. A spool the disk will not list or read is tried again the
   * next round, and the scans in memory are stored meanwhile: a broken disk must not stop storing.
   */
  private async sendSpooled(): Promise<void> {
    const spool = this.spool;
    if (!spool || !this.spooled) return;
    const batches = await this.onDisk("read", () => spool.batches());
    if (batches === DISK_FAILED) return;
    for (const batch of batches) {
      const scans = await this.onDisk("read", () => batch.read());
      if (scans === null) {
        this.options.logger.error(
          { spoolDir: spool.dir },
          "a spooled batch of scans cannot be decoded; renamed to .unreadable and skipped",
        );
        continue;
      }
      if (scans === DISK_FAILED) return;
      // Checked again as it comes off the disk: the spool may be an older version's, or tampered with.
      await this.sendOrRefuse(scans.count, scans.columns);
      // A batch the disk keeps is sent again later, and its scans are skipped then by their ids.
      if ((await this.onDisk("clean up", () => batch.remove())) === DISK_FAILED) return;
    }
    // Only spill adds files, and never while a flush is sending.
    this.spooled = false;
  }

  private async sendBuffered(): Promise<void> {
    while (this.buffer.id.length > 0) {
      const batch = sliceScanColumns(this.buffer, 0, MAX_BATCH_SIZE);
      await this.sendOrRefuse(batch.id.length, () => batch);
      dropFirstScans(this.buffer, batch.id.length);
      if (this.spool && this.buffer.id.length > MAX_BACKLOG_IN_MEMORY) {
        // Behind: the backlog goes to disk, and the next round sends it, spooled batches first.
        if (!this.behind)
          this.options.logger.warn(
            { pending: this.pending },
            "storing scans is slower than they come; spooling the backlog to disk",
          );
        this.behind = true;
        await this.spill();
        return;
      }
    }
    if (this.behind) this.options.logger.info("storing scans keeps up again");
    this.behind = false;
  }

  /**
   * Sends a batch of `count` scans (`columns` builds it, and may refuse it as invalid); returns once it
   * is stored or refused for good, throws when it should be tried again.
   */
  private async sendOrRefuse(count: number, columns: () => ScanColumns): Promise<void> {
    try {
      // A batch is a trace of its own (sampled like redirects): RecordScans down to its INSERT.
      await withSpan("record scans", { hotPath: true, attributes: { "qrplatform.scans.count": count } }, () =>
        this.options.send(columns()),
      );
      this.stored.inc(count);
      this.counts.stored += count;
    } catch (error) {
      if (!(error instanceof ConnectError && error.code === Code.InvalidArgument)) throw error;
      this.drop("refused", count);
      // Retrying cannot help a batch the service refuses; keeping it would block every later scan.
      this.options.logger.error({ err: error, scans: count }, "dropping a batch of scans the links service refused");
    }
  }

  private drop(reason: DropReason, scans: number): void {
    this.lost.inc({ reason }, scans);
    this.counts.dropped[reason] += scans;
  }

  /** Moves every scan waiting in memory to the spool, if there is one; what the disk refuses stays in memory. */
  private async spill(): Promise<void> {
    const spool = this.spool;
    if (!spool) return;
    await this.classifyRedirects();
    while (this.buffer.id.length > 0) {
      // A file is a batch as large as RecordScans takes: fewer files to sync, fewer calls to replay them.
      const batch = sliceScanColumns(this.buffer, 0, MAX_BATCH_SIZE);
      if ((await this.onDisk("write", () => spool.write(batch))) === DISK_FAILED) return;
      dropFirstScans(this.buffer, batch.id.length);
      this.spooled = true;
    }
  }

  /**
   * Runs one operation on the spool; answers DISK_FAILED when the disk fails it (full, read-only, its
   * permissions changed). Said in the log once when the disk starts failing and once when it works
   * again, not on every round that tries it (one after every batch while storing is behind).
   */
  private async onDisk<T>(
    operation: "read" | "write" | "clean up",
    run: () => Promise<T>,
  ): Promise<T | typeof DISK_FAILED> {
    try {
      const result = await run();
      if (this.spoolFailing)
        this.options.logger.info({ spoolDir: this.spool?.dir }, "the scan spool's disk works again");
      this.spoolFailing = false;
      return result;
    } catch (error) {
      if (!this.spoolFailing) {
        this.options.logger.error(
          { err: error, operation, spoolDir: this.spool?.dir, pending: this.pending },
          "the scan spool's disk fails; scans wait in memory until it works again",
        );
      }
      this.spoolFailing = true;
      return DISK_FAILED;
    }
  }
}
