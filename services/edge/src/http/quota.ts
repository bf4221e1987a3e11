import type { RequestHandler, Response } from "express";
import type { Logger } from "pino";
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RLWrapperTimeouts,
  type RateLimiterAbstract,
} from "rate-limiter-flexible";
import { createClient } from "redis";
import { noMetrics, type Metrics } from "@qrplatform/platform";
import { callerOf } from "./auth.js";
import { ApiError } from "./api-error.js";

/** Quotas count requests per API key in fixed windows of one hour, each starting with the key's first request. */
export const QUOTA_WINDOW_SECONDS = 3600;

/** A key's count in its current window, this request included. */
export interface WindowCount {
  /** Requests the key has made in this window, including refused ones. */
  count: number;
  /** Milliseconds until the window ends and the count starts again from zero. */
  msBeforeReset: number;
}

/**
 * Where request counts live: Redis, shared by every edge replica, or this process's memory. A store
 * only counts; the caller compares the count with the account's limit of the moment. Counts therefore
 * do not depend on the limit: raising an account's limit and lowering it again keeps every key's count
 * for the hour, and a key refused at a lower limit is admitted once the limit is raised above its count.
 */
export interface QuotaStore {
  /** Counts one request of `key` and answers the window's count so far. */
  count(key: string): Promise<WindowCount>;
  close(): Promise<void>;
}

/**
 * The points of the one limiter each store uses: so many that it never refuses. rate-limiter-flexible
 * then serves as an atomic counter in fixed windows (in Redis one Lua script per request), and the
 * limit is applied by hourlyQuota.
 */
const NEVER_REFUSE = Number.MAX_SAFE_INTEGER;
const KEY_PREFIX = "qrp:quota";

/** Counts in this process only: the embedded platform, and a single edge without Redis. */
export function memoryQuotaStore(): QuotaStore {
  const counter = memoryCounter();
  return { count: (key) => countWith(counter, key), close: async () => {} };
}

async function countWith(counter: RateLimiterAbstract, key: string): Promise<WindowCount> {
  const counted = await counter.consume(key);
  return { count: counted.consumedPoints, msBeforeReset: counted.msBeforeNext };
}

/**
 * How long a quota check waits for a connected Redis before it counts in memory instead. Generous on
 * purpose: a timed-out command may still have counted in Redis, so each timeout can admit one request
 * too many; a Redis that is down is noticed at once, from the connection, not by this timeout.
 */
const REDIS_COMMAND_TIMEOUT_MS = 2000;
const FIRST_CONNECTION_WAIT_MS = 5000;
/**
 * Commands sent to a Redis that stopped answering wait on the connection until it answers or drops;
 * past this many, new counts go straight to memory instead of piling up.
 */
const MAX_PENDING_COMMANDS = 1000;

/**
 * Counts in Redis, atomically (one Lua script per request), so replicas share each key's quota. When
 * Redis is unreachable or slow, each replica fails open to its own in-memory count with the same
 * limit: a key can then make up to that many requests per replica, but no request fails because of
 * Redis. Authentication does not depend on Redis and never fails open. Waits up to a few seconds for
 * the first connection, so an edge does not start out counting alone while Redis is merely slow to answer.
 */
export async function redisQuotaStore(redisUrl: string, logger: Logger): Promise<QuotaStore> {
  const redis = createClient({
    url: redisUrl,
    // A command is never kept for later: while Redis is away it fails at once and is counted in memory.
    disableOfflineQueue: true,
    commandsQueueMaxLength: MAX_PENDING_COMMANDS,
    socket: { reconnectStrategy: (attempt) => Math.min((attempt + 1) * 200, 2000) },
  });
  let reachable = true;
  // node-redis reports every failed connection attempt as an 'error'; unhandled, one would end the process.
  redis.on("error", (err) => {
    if (reachable) logger.warn({ err }, "Redis is unreachable: hourly quotas fall back to per-process counts");
    reachable = false;
  });
  redis.on("ready", () => {
    if (!reachable) logger.info("Redis is reachable again: hourly quotas are shared again");
    reachable = true;
  });
  // Keeps trying in the background (and counts in memory meanwhile) when the first attempts fail.
  const connected = redis.connect().catch(() => {});
  await Promise.race([connected, new Promise((resolve) => setTimeout(resolve, FIRST_CONNECTION_WAIT_MS).unref())]);
  const memory = memoryCounter();
  const inRedis = new RateLimiterRedis({
    storeClient: redis,
    useRedisPackage: true,
    points: NEVER_REFUSE,
    duration: QUOTA_WINDOW_SECONDS,
    keyPrefix: KEY_PREFIX,
    rejectIfRedisNotReady: true,
  });
  // node-redis has no timeout for a command already sent, so the wait is bounded around it; the memory
  // count is kept by the wrapper alone, so a command that fails after its timeout is not counted twice.
  const counter = new RLWrapperTimeouts({
    limiter: inRedis,
    timeoutMs: REDIS_COMMAND_TIMEOUT_MS,
    insuranceLimiter: memory,
  });
  return {
    count: (key) => countWith(counter, key),
    close: async () => {
      if (redis.isOpen) redis.destroy();
    },
  };
}

function memoryCounter(): RateLimiterMemory {
  return new RateLimiterMemory({ points: NEVER_REFUSE, duration: QUOTA_WINDOW_SECONDS, keyPrefix: KEY_PREFIX });
}

function setRateLimitHeaders(res: Response, limit: number, remaining: number, resetSeconds: number): void {
  res.setHeader("RateLimit-Limit", String(limit));
  res.setHeader("RateLimit-Remaining", String(remaining));
  res.setHeader("RateLimit-Reset", String(resetSeconds));
}

/**
 * Counts the request against the caller's hourly quota, after authentication (a refused key costs
 * nothing). Every counted response carries RateLimit-Limit, -Remaining and -Reset (seconds until the
 * window ends); past the limit the answer is 429 `rate_limited` with Retry-After equal to the reset.
 * Each decision is counted in `qrp_quota_decisions_total{decision}`: admitted, refused, or unlimited.
 */
export function hourlyQuota(store: QuotaStore, metrics: Metrics = noMetrics): RequestHandler {
  const decisions = metrics.counter({
    name: "qrp_quota_decisions_total",
    help: "Hourly-quota decisions on API requests: admitted, refused (429 rate_limited), unlimited (no limit set).",
    labelNames: ["decision"],
  });
  return async (_req, res, next) => {
    const caller = callerOf(res);
    const configured = caller.hourlyRequestLimit;
    if (configured === undefined) {
      decisions.inc({ decision: "unlimited" });
      return next();
    }
    const limit = Number(configured);
    const { count, msBeforeReset } =
      limit > 0 ? await store.count(caller.apiKeyId) : { count: 0, msBeforeReset: QUOTA_WINDOW_SECONDS * 1000 };
    const admitted = limit > 0 && count <= limit;
    const remaining = Math.max(0, limit - count);
    const resetSeconds = Math.max(1, Math.ceil(msBeforeReset / 1000));
    // Set on the response itself, so the 429 below carries them too.
    setRateLimitHeaders(res, limit, remaining, resetSeconds);
    decisions.inc({ decision: admitted ? "admitted" : "refused" });
    if (!admitted) {
      throw new ApiError(
        429,
        "rate_limited",
        `This API key has used its ${limit} requests for this hour; the limit resets in ${resetSeconds} seconds.`,
        { limit, reset_seconds: resetSeconds },
        { "Retry-After": String(resetSeconds) },
      );
    }
    next();
  };
}
