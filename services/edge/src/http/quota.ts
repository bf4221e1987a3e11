import { once } from "node:events";
import type { RequestHandler, Response } from "express";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Account, Plan } from "@qrplatform/api/tenancy";
import { callerOf } from "./auth.js";
import { ApiError } from "./api-error.js";

/** Quotas count requests per API key in fixed windows of one hour, each starting with the key's first request. */
export const QUOTA_WINDOW_SECONDS = 3600;

/** Where request counts live: Redis, shared by every edge replica, or this process's memory. */
export interface QuotaStore {
  /** The limiter that allows `limit` requests per window to each key. */
  limiter(limit: number): RateLimiterAbstract;
  close(): Promise<void>;
}

/** Counts in this process only: the embedded platform, and a single edge without Redis. */
export function memoryQuotaStore(): QuotaStore {
  const limiters = new Map<number, RateLimiterAbstract>();
  return {
    limiter: (limit) => cached(limiters, limit, () => memoryLimiter(limit)),
    close: async () => {},
  };
}

/**
 * How long a quota check waits for a connected Redis before it counts in memory instead. Generous on
 * purpose: a timed-out command may still have counted in Redis, so each timeout can admit one request
 * too many; a Redis that is down is noticed at once, from the connection, not by this timeout.
 */
const REDIS_COMMAND_TIMEOUT_MS = 2000;
const FIRST_CONNECTION_WAIT_MS = 5000;

/**
 * Counts in Redis, atomically (one Lua script per request), so replicas share each key's quota. When
 * Redis is unreachable or slow, each replica fails open to its own in-memory count with the same
 * limit: a key can then make up to that many requests per replica, but no request fails because of
 * Redis. Authentication does not depend on Redis and never fails open. Waits up to a few seconds for
 * the first connection, so an edge does not start out counting alone while Redis is merely slow to answer.
 */
export async function redisQuotaStore(redisUrl: string, logger: Logger): Promise<QuotaStore> {
  const redis = new Redis(redisUrl, {
    enableOfflineQueue: false,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  let reachable = true;
  redis.on("error", (err) => {
    if (reachable) logger.warn({ err }, "Redis is unreachable: hourly quotas fall back to per-process counts");
    reachable = false;
  });
  redis.on("ready", () => {
    if (!reachable) logger.info("Redis is reachable again: hourly quotas are shared again");
    reachable = true;
  });
  await Promise.race([once(redis, "ready"), new Promise((resolve) => setTimeout(resolve, FIRST_CONNECTION_WAIT_MS).unref())]);
  const limiters = new Map<number, RateLimiterAbstract>();
  return {
    limiter: (limit) =>
      cached(
        limiters,
        limit,
        () =>
          new RateLimiterRedis({
            storeClient: redis,
            points: limit,
            duration: QUOTA_WINDOW_SECONDS,
            keyPrefix: `qrp:quota:${limit}`,
            rejectIfRedisNotReady: true,
            insuranceLimiter: memoryLimiter(limit),
          }),
      ),
    close: async () => {
      redis.disconnect();
    },
  };
}

function memoryLimiter(limit: number): RateLimiterMemory {
  return new RateLimiterMemory({ points: limit, duration: QUOTA_WINDOW_SECONDS, keyPrefix: `qrp:quota:${limit}` });
}

function cached(limiters: Map<number, RateLimiterAbstract>, limit: number, make: () => RateLimiterAbstract): RateLimiterAbstract {
  let limiter = limiters.get(limit);
  if (!limiter) limiters.set(limit, (limiter = make()));
  return limiter;
}

/** An account's hourly request limit: its override, else its plan's; undefined when neither sets one. */
export function hourlyLimitOf(account: Account, plan: Plan): bigint | undefined {
  return account.hourlyRequestLimitOverride ?? plan.hourlyRequestLimit;
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
 */
export function hourlyQuota(store: QuotaStore): RequestHandler {
  return async (_req, res, next) => {
    const caller = callerOf(res);
    const configured = hourlyLimitOf(caller.account, caller.plan);
    if (configured === undefined) return next();
    const limit = Number(configured);
    let outcome: RateLimiterRes;
    let admitted = true;
    if (limit <= 0) {
      outcome = new RateLimiterRes(0, QUOTA_WINDOW_SECONDS * 1000);
      admitted = false;
    } else {
      try {
        outcome = await store.limiter(limit).consume(caller.apiKeyId);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        outcome = rejection;
        admitted = false;
      }
    }
    const resetSeconds = Math.max(1, Math.ceil(outcome.msBeforeNext / 1000));
    // Set on the response itself, so the 429 below carries them too.
    setRateLimitHeaders(res, limit, outcome.remainingPoints, resetSeconds);
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
