import { Code, type ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "pino";
import { serviceError } from "../errors.js";
import { observeCall } from "./call-outcome.js";

/** Something hosted services cannot answer without, such as their database. */
export interface Dependency {
  /** A snake_case name; callers get the reason `<name>_unavailable` while it is away. */
  readonly name: string;
  /** Whether an error means the dependency cannot be reached right now, rather than that a request is wrong. */
  isUnavailable(error: unknown): boolean;
  /** Resolves when the dependency answers, rejects when it does not; cheap, as it runs every few seconds. */
  check(): Promise<void>;
}

/** How often each dependency is checked. */
const CHECK_INTERVAL_MS = 2_000;

/**
 * Whether the dependencies of a process are reachable, for readiness (grpc.health.v1) and for the
 * errors calls get. A dependency is marked away as soon as a call fails because of it, or a periodic
 * check fails; only a check that succeeds marks it back, so one lucky query does not flip readiness.
 * Nothing here ends the process: an outage is waited out, and liveness stays good.
 */
export class Readiness {
  readonly #dependencies: readonly Dependency[];
  readonly #away = new Set<Dependency>();
  readonly #watchers = new Set<() => void>();
  readonly #logger: Logger | undefined;
  readonly #timer: NodeJS.Timeout | undefined;
  #checking = false;

  constructor(dependencies: readonly Dependency[], options: { logger?: Logger; checkIntervalMs?: number } = {}) {
    this.#dependencies = dependencies;
    this.#logger = options.logger;
    if (dependencies.length > 0) {
      this.#timer = setInterval(() => void this.checkNow(), options.checkIntervalMs ?? CHECK_INTERVAL_MS);
      // Checking must never keep a process alive on its own.
      this.#timer.unref();
    }
  }

  /** True while every dependency is reachable, as far as calls and checks have seen. */
  get ready(): boolean {
    return this.#away.size === 0;
  }

  /**
   * The error a call should fail with instead of `error` when `error` means a dependency is away:
   * UNAVAILABLE with the reason `<name>_unavailable` and a message that reveals nothing; the original
   * stays as the cause, for the logs. Marks the dependency away. Undefined for any other error.
   */
  unavailableError(error: unknown): ConnectError | undefined {
    const dependency = this.#dependencies.find((candidate) => candidate.isUnavailable(error));
    if (!dependency) return undefined;
    this.#mark(dependency, false, error);
    return serviceError(
      Code.Unavailable,
      `${dependency.name}_unavailable`,
      "The service is temporarily unavailable; retry shortly.",
      {
        metadata: { dependency: dependency.name },
        cause: error,
      },
    );
  }

  /** Checks every dependency once, and updates readiness. The periodic checks call this. */
  async checkNow(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    try {
      await Promise.all(
        this.#dependencies.map(async (dependency) => {
          try {
            await dependency.check();
            this.#mark(dependency, true);
          } catch (error) {
            // A check that fails for any reason means not ready, outage or not.
            this.#mark(dependency, false, error);
          }
        }),
      );
    } finally {
      this.#checking = false;
    }
  }

  /** Calls `notify` whenever readiness changes, until the returned function is called. */
  watch(notify: () => void): () => void {
    this.#watchers.add(notify);
    return () => this.#watchers.delete(notify);
  }

  /** Stops the periodic checks. */
  close(): void {
    clearInterval(this.#timer);
  }

  #mark(dependency: Dependency, reachable: boolean, error?: unknown): void {
    if (reachable === !this.#away.has(dependency)) return;
    if (reachable) {
      this.#away.delete(dependency);
      this.#logger?.info({ dependency: dependency.name }, "dependency reachable again: serving");
    } else {
      this.#away.add(dependency);
      this.#logger?.warn(
        { dependency: dependency.name, err: error },
        "dependency unreachable: not serving until it answers",
      );
    }
    for (const notify of this.#watchers) notify();
  }
}

/** Turns errors that mean a dependency is away into UNAVAILABLE, for every RPC, in both shapes, mid-stream too. */
export function failFastWhenUnavailable(readiness: Readiness): Interceptor {
  return (next) => (req) =>
    observeCall(() => next(req), req.signal, {
      mapError: (error) => readiness.unavailableError(error) ?? error,
      settled: () => {},
    });
}
