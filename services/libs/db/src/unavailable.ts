import { CONNECTION_ERROR_CODES, Readiness, type Dependency, type Logger, type Metrics } from "@qrplatform/platform";
import type { Database } from "./database.js";
import { registerPoolMetrics } from "./pool-metrics.js";

/**
 * SQLSTATEs of a server that is going away or not taking connections: admin_shutdown (57P01, a fast
 * or smart stop terminating backends), crash_shutdown (57P02, another backend crashed), cannot_connect_now
 * (57P03, starting up or shutting down) and too_many_connections (53300). Class 08, connection
 * exceptions, is matched as a class.
 */
const SERVER_STATES = new Set(["57P01", "57P02", "57P03", "53300"]);

/**
 * The messages node-postgres gives errors it makes itself, without a code: the socket closed under a
 * client ("Connection terminated unexpectedly", and "Connection terminated due to connection timeout"
 * when connecting took too long), no pooled connection became free in time, and a client that already
 * lost its connection being asked for a query.
 */
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
];

/**
 * Whether an error means the database cannot be reached right now (down, restarting, refusing or
 * dropping connections, out of connection slots) rather than that a query is wrong. Such errors go
 * away by themselves: callers are told to retry later (gRPC UNAVAILABLE), never that the server
 * failed. Follows `cause` and the errors of an AggregateError (a connection refused on every address
 * of a host), so wrapped errors count too. An error of the embedded PGlite never matches.
 *
 * This is the only place that knows what an outage looks like; the hosting, readiness and tests ask it.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const visit = (candidate: unknown): boolean => {
    if (typeof candidate !== "object" || candidate === null || seen.has(candidate)) return false;
    seen.add(candidate);
    const { code, message, cause, errors } = candidate as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      errors?: unknown;
    };
    if (
      typeof code === "string" &&
      (CONNECTION_ERROR_CODES.has(code) || SERVER_STATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))
    )
      return true;
    if (typeof message === "string" && DRIVER_MESSAGES.some((pattern) => pattern.test(message))) return true;
    if (Array.isArray(errors) && errors.some(visit)) return true;
    return visit(cause);
  };
  return visit(error);
}

/**
 * The database as a dependency of hosted gRPC services (see `Readiness` in @qrplatform/platform):
 * calls failing with {@link isDatabaseUnavailable} errors answer UNAVAILABLE with the reason
 * `database_unavailable`, and readiness checks it with `select 1`.
 */
export function databaseDependency(database: Pick<Database, "check">): Dependency {
  return { name: "database", isUnavailable: isDatabaseUnavailable, check: () => database.check() };
}

/**
 * What a process that keeps data needs of its database besides queries: readiness that follows it
 * (see {@link databaseDependency}), and its pool's gauges on the process's metrics.
 */
export function databaseReadiness(database: Database, options: { logger: Logger; metrics: Metrics }): Readiness {
  registerPoolMetrics(options.metrics, database);
  return new Readiness([databaseDependency(database)], { logger: options.logger });
}

/** The first wait between attempts of {@link whenDatabaseAnswers}; it doubles up to the longest. */
const FIRST_RETRY_MS = 500;
const LONGEST_RETRY_MS = 15_000;

/**
 * Runs `attempt` (a service's start: its migrations and first reads) until it no longer fails because
 * the database is away ({@link isDatabaseUnavailable}), waiting longer between tries up to 15 s. A
 * process started during an outage thus waits it out instead of exiting (and a pod crash-looping).
 * Logs once when it starts waiting and once when the database answers, not per try. Any other error
 * is thrown at once; so is an abort of `signal`, a shutdown during the wait.
 */
export async function whenDatabaseAnswers<T>(
  attempt: () => Promise<T>,
  options: { logger: Logger; what: string; signal?: AbortSignal; firstRetryMs?: number },
): Promise<T> {
  let delay = options.firstRetryMs ?? FIRST_RETRY_MS;
  let waiting = false;
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      const result = await attempt();
      if (waiting) options.logger.info({ dependency: "database" }, `database reachable: ${options.what} done`);
      return result;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      if (!waiting) {
        options.logger.warn(
          { dependency: "database", err: error },
          `database unreachable: ${options.what} waits for it, retrying with backoff`,
        );
        waiting = true;
      }
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay);
      const stop = () => {
        clearTimeout(timer);
        resolve();
      };
      options.signal?.addEventListener("abort", stop, { once: true });
    });
    delay = Math.min(delay * 2, LONGEST_RETRY_MS);
  }
}
