import { randomUUID } from "node:crypto";
import { createClient } from "redis";
import type { Logger } from "pino";

/** What a listener hears: a change, or "everything" when changes may have been missed (after a reconnection). */
export type ChangeEvent<T> = T | "everything";

/**
 * Tells every instance that keeps a cache, in this process and others, that something it may hold
 * changed. The links service announces link and domain changes on one (the redirectors' caches), and
 * tenancy announces key and account changes on another (the edges' caches of authenticated keys).
 */
export interface ChangeBus<T> {
  /** Announces a change. Never throws: a failure is logged and must not fail the update that caused it. */
  publish(change: T): Promise<void>;
  /** Hears every change, this process's own included; returns the unsubscribe function. */
  subscribe(listener: (event: ChangeEvent<T>) => void): () => void;
  /** Whether messages are known to be delivered right now (memory: always; Redis: subscriber connected). */
  readonly connected: boolean;
  close(): Promise<void>;
}

/** The listeners of one bus; one that throws is logged and does not keep the others from hearing. */
class Listeners<T> {
  private readonly listeners = new Set<(event: ChangeEvent<T>) => void>();
  constructor(
    private readonly logger: Logger | undefined,
    private readonly what: string,
  ) {}

  add(listener: (event: ChangeEvent<T>) => void): () => void {
    const entry = (event: ChangeEvent<T>) => listener(event);
    this.listeners.add(entry);
    return () => this.listeners.delete(entry);
  }

  emit(event: ChangeEvent<T>): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.logger?.error({ err }, `a listener of ${this.what} failed`);
      }
    }
  }
}

/** One process only: the embedded platform, a single instance, and tests. */
export function memoryChangeBus<T>(logger?: Logger, what = "changes"): ChangeBus<T> {
  const listeners = new Listeners<T>(logger, what);
  return {
    publish: async (change) => listeners.emit(change),
    subscribe: (listener) => listeners.add(listener),
    connected: true,
    close: async () => {},
  };
}

/** What a Redis bus carries and how its log lines speak of it. */
export interface RedisChangeBusOptions<T> {
  /** The pub/sub channel, such as "qrp:links:changed". */
  readonly channel: string;
  /** The change a message holds (the JSON without its sender); undefined for anything that is not one. */
  readonly parse: (message: Record<string, unknown>) => T | undefined;
  /** What the changes are, for log lines: "link changes". */
  readonly what: string;
  /** What listeners do while changes may go unheard, for the log line when Redis goes away. */
  readonly whileUnreachable: string;
}

/** How long publish waits for Redis before returning; the message stays queued and is sent when Redis answers. */
const PUBLISH_WAIT_MS = 500;
/** How long a message waits to be sent while Redis is away before it is given up (and logged). */
const PUBLISH_GIVE_UP_MS = 15_000;
/** Messages waiting for Redis past this many are given up at once rather than held in memory. */
const MAX_QUEUED_MESSAGES = 10_000;
/** The subscriber pings this often, and counts itself disconnected when a ping gets no answer in time. */
const HEARTBEAT_MS = 250;
const HEARTBEAT_TIMEOUT_MS = 750;
const FIRST_CONNECTION_WAIT_MS = 5000;
const CLOSE_WAIT_MS = 1000;

/**
 * Redis pub/sub on one channel, so every instance hears every change. Two connections: publishing,
 * and subscribing (node-redis gives a subscribed connection to pub/sub only). Local listeners hear a
 * change at once, before Redis is asked, and do not hear it again as it comes back.
 *
 * `connected` is true only while the subscription is live. The subscriber pings every 250 ms and drops
 * a connection silent for 750 ms, so a Redis that goes silent without closing the connection is noticed
 * within a second. After every (re)subscription listeners hear "everything": messages sent while it was
 * away are lost. Messages published while Redis is away are queued and sent when it answers again
 * (given up, and logged, after 15 seconds). Waits up to a few seconds for the first connection.
 */
export async function redisChangeBus<T extends object>(
  redisUrl: string,
  logger: Logger,
  options: RedisChangeBusOptions<T>,
): Promise<ChangeBus<T>> {
  const { channel, what } = options;
  const self = randomUUID();
  const listeners = new Listeners<T>(logger, what);
  const reconnectStrategy = (attempt: number) => Math.min((attempt + 1) * 100, 1000);
  const publisher = createClient({
    url: redisUrl,
    commandsQueueMaxLength: MAX_QUEUED_MESSAGES,
    socket: { reconnectStrategy },
  });
  const subscriber = createClient({
    url: redisUrl,
    disableOfflineQueue: true,
    // node-redis sends the next ping only once the last one is answered: a frozen Redis leaves the
    // connection idle, and the socket timeout then drops it.
    pingInterval: HEARTBEAT_MS,
    socket: { reconnectStrategy, socketTimeout: HEARTBEAT_TIMEOUT_MS },
  });

  let subscribed = false;
  let closing = false;
  let firstSubscription = () => {};
  const subscribedOnce = new Promise<void>((resolve) => (firstSubscription = resolve));
  let reachable = true;
  const unreachable = (err: unknown) => {
    subscribed = false;
    if (reachable && !closing) logger.warn({ err }, `Redis is unreachable: ${options.whileUnreachable}`);
    reachable = false;
  };
  // node-redis reports every failed connection attempt as an 'error'; unhandled, one would end the process.
  publisher.on("error", () => {});
  subscriber.on("error", unreachable);
  subscriber.on("end", () => {
    subscribed = false;
  });
  const onMessage = (text: string) => {
    const message = parseMessage(text, options.parse);
    if (!message) logger.warn({ channel }, `ignoring a malformed message of ${what}`);
    else if (message.from !== self) listeners.emit(message.change);
  };
  // On every connection. node-redis subscribes again before it reports a reconnection ready, so then
  // this only confirms the subscription; the first time it sends SUBSCRIBE.
  subscriber.on("ready", () => {
    subscriber.subscribe(channel, onMessage).then(
      () => {
        if (!subscriber.isReady) return;
        subscribed = true;
        if (!reachable) logger.info(`Redis is reachable again: ${what} are heard across instances again`);
        reachable = true;
        listeners.emit("everything");
        firstSubscription();
      },
      (err: unknown) => unreachable(err),
    );
  });

  // Both keep trying in the background when the first attempts fail.
  void publisher.connect().catch(() => {});
  void subscriber.connect().catch(() => {});
  await Promise.race([subscribedOnce, new Promise((resolve) => setTimeout(resolve, FIRST_CONNECTION_WAIT_MS).unref())]);

  return {
    async publish(change) {
      listeners.emit(change);
      const message = JSON.stringify({ from: self, ...change });
      const sent = publisher
        .withCommandOptions({ timeout: PUBLISH_GIVE_UP_MS })
        .publish(channel, message)
        .then(
          () => undefined,
          (err: unknown) =>
            logger.error(
              { err, change },
              `could not announce ${what}: other instances keep what they cached until it expires`,
            ),
        );
      // While Redis is away the message waits in the queue; the update that caused it does not.
      if (!publisher.isReady) return;
      await waitAtMost(sent, PUBLISH_WAIT_MS);
    },
    subscribe: (listener) => listeners.add(listener),
    get connected() {
      return subscribed && subscriber.isReady;
    },
    async close() {
      closing = true;
      if (subscriber.isOpen) subscriber.destroy();
      // A graceful close lets messages already sent be delivered; with Redis away there is nothing to wait for.
      if (publisher.isReady) {
        await waitAtMost(
          publisher.close().catch(() => {}),
          CLOSE_WAIT_MS,
        );
      }
      if (publisher.isOpen) publisher.destroy();
    },
  };
}

/** The change a message carries, and which bus sent it; undefined for anything that is not one of ours. */
function parseMessage<T>(
  text: string,
  parse: (message: Record<string, unknown>) => T | undefined,
): { from: string; change: T } | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const { from, ...rest } = json as Record<string, unknown>;
  if (typeof from !== "string" || from.length > 64) return undefined;
  const change = parse(rest);
  return change === undefined ? undefined : { from, change };
}

/** Waits for `work`, or `ms` at most; the work goes on either way. */
async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
