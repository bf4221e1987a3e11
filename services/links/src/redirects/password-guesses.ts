import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  RLWrapperTimeouts,
  type RateLimiterAbstract,
} from "rate-limiter-flexible";
import { createClient } from "redis";
import type { Logger } from "@qrplatform/platform";

// Wrong password guesses at a protected code, limited per code and visitor address (ADR 0018): in
// Redis, shared by every redirector, where REDIS_URL is set, as the edge's hourly quotas are; in this
// process's memory otherwise (the embedded platform, a single links instance). A pair that used its
// guesses waits out the rest of the window; a right password never counts.

/** Wrong guesses one address has at one code per window. */
export const WRONG_GUESSES = 5;
/** The window, in seconds: 15 minutes from the first wrong guess. */
export const GUESS_WINDOW_SECONDS = 15 * 60;
const KEY_PREFIX = "qrp:password-guesses";

/** Counts wrong guesses per key (the code and the visitor's address). */
export interface PasswordGuesses {
  /** Seconds until this key may guess again, or 0 when it may guess now. */
  waitFor(key: string): Promise<number>;
  /** Counts a wrong guess of this key; answers {@link waitFor}'s answer after it. */
  wrong(key: string): Promise<number>;
  close(): Promise<void>;
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

function guessesWith(limiter: RateLimiterAbstract, close: () => Promise<void>): PasswordGuesses {
  return {
    async waitFor(key) {
      const counted = await limiter.get(key);
      return counted !== null && counted.consumedPoints >= WRONG_GUESSES ? seconds(counted.msBeforeNext) : 0;
    },
    async wrong(key) {
      try {
        const counted = await limiter.consume(key);
        return counted.remainingPoints === 0 ? seconds(counted.msBeforeNext) : 0;
      } catch (refused) {
        if (refused instanceof RateLimiterRes) return seconds(refused.msBeforeNext);
        throw refused;
      }
    },
    close,
  };
}

const memoryLimiter = () =>
  new RateLimiterMemory({ points: WRONG_GUESSES, duration: GUESS_WINDOW_SECONDS, keyPrefix: KEY_PREFIX });

/** Wrong guesses counted in this process only. */
export function memoryPasswordGuesses(): PasswordGuesses {
  return guessesWith(memoryLimiter(), async () => {});
}

/** How long a count waits for Redis before this process counts alone (as the edge's quotas do). */
const REDIS_COMMAND_TIMEOUT_MS = 2000;
const FIRST_CONNECTION_WAIT_MS = 5000;

/**
 * Wrong guesses counted in Redis, shared by every redirector. While Redis is unreachable or slow, each
 * process counts in its own memory with the same limit, so a guess never fails because of Redis.
 */
export async function redisPasswordGuesses(redisUrl: string, logger: Logger): Promise<PasswordGuesses> {
  const redis = createClient({
    url: redisUrl,
    disableOfflineQueue: true,
    socket: { reconnectStrategy: (attempt) => Math.min((attempt + 1) * 200, 2000) },
  });
  let reachable = true;
  redis.on("error", (err) => {
    if (reachable) logger.warn({ err }, "Redis is unreachable: password guesses are counted per process");
    reachable = false;
  });
  redis.on("ready", () => {
    reachable = true;
  });
  const connected = redis.connect().catch(() => {});
  await Promise.race([connected, new Promise((resolve) => setTimeout(resolve, FIRST_CONNECTION_WAIT_MS).unref())]);
  const limiter = new RLWrapperTimeouts({
    limiter: new RateLimiterRedis({
      storeClient: redis,
      useRedisPackage: true,
      points: WRONG_GUESSES,
      duration: GUESS_WINDOW_SECONDS,
      keyPrefix: KEY_PREFIX,
      rejectIfRedisNotReady: true,
    }),
    timeoutMs: REDIS_COMMAND_TIMEOUT_MS,
    insuranceLimiter: memoryLimiter(),
  });
  return guessesWith(limiter, async () => {
    if (redis.isOpen) redis.destroy();
  });
}
