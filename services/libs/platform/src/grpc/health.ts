import { create, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import {
  Health,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "@qrplatform/api/grpc-health";
import type { Readiness } from "./readiness.js";

/**
 * The health status of the process itself: SERVING for as long as it runs, even while a dependency is
 * away or it drains, so liveness and startup probes never get a pod restarted for an outage.
 */
export const HEALTH_LIVENESS = "liveness";

/**
 * The health status of a process that still does useful work without its dependencies (the redirector
 * answers from its cache): SERVING until shutdown begins, whatever the dependencies.
 */
export const HEALTH_ACCEPTING = "accepting";

/**
 * The state behind grpc.health.v1. The server ("") and every registered service are SERVING while
 * the process is not shutting down and its dependencies are reachable ({@link Readiness}): that is
 * readiness. {@link HealthState.shutDown} turns them NOT_SERVING so load balancers drain first.
 * {@link HEALTH_LIVENESS} and {@link HEALTH_ACCEPTING} are described above.
 */
export class HealthState {
  #services: string[];
  #readiness: Readiness | undefined;
  #started: boolean;
  #serving = true;
  readonly #watchers = new Set<() => void>();

  /**
   * With `starting`, the process has bound its port but not built its services yet: only
   * {@link HEALTH_LIVENESS} is SERVING until {@link HealthState.started} names what it hosts.
   */
  constructor(services: readonly DescService[], readiness?: Readiness, options: { starting?: boolean } = {}) {
    this.#services = ["", ...services.map((s) => s.typeName)];
    this.#readiness = readiness;
    this.#started = !options.starting;
    readiness?.watch(() => this.#notify());
  }

  /** The services are built: from now on they and the server follow readiness. */
  started(services: readonly DescService[], readiness?: Readiness): void {
    this.#services = ["", ...services.map((s) => s.typeName)];
    this.#readiness = readiness;
    this.#started = true;
    readiness?.watch(() => this.#notify());
    this.#notify();
  }

  /** The status of one service, or undefined for a service this server does not host. */
  statusOf(service: string): ServingStatus | undefined {
    const serving = (() => {
      if (service === HEALTH_LIVENESS) return true;
      if (service === HEALTH_ACCEPTING) return this.#started && this.#serving;
      if (this.#services.includes(service)) return this.#started && this.#serving && (this.#readiness?.ready ?? true);
      return undefined;
    })();
    if (serving === undefined) return undefined;
    return serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  }

  /** Every hosted service with its status. */
  all(): Record<string, ServingStatus> {
    return Object.fromEntries(this.#services.map((name) => [name, this.statusOf(name)!]));
  }

  /** Marks everything but liveness NOT_SERVING and tells watchers. */
  shutDown(): void {
    this.#serving = false;
    this.#notify();
  }

  /** Calls `notify` on every status change until the returned function is called. */
  watch(notify: () => void): () => void {
    this.#watchers.add(notify);
    return () => this.#watchers.delete(notify);
  }

  #notify(): void {
    for (const notify of this.#watchers) notify();
  }
}

/** Registers grpc.health.v1.Health backed by the given state. */
export function registerHealth(router: ConnectRouter, state: HealthState): void {
  router.service(Health, {
    check(req) {
      const status = state.statusOf(req.service);
      if (status === undefined) throw new ConnectError(`Unknown service "${req.service}".`, Code.NotFound);
      return { status };
    },
    list() {
      const statuses = Object.fromEntries(
        Object.entries(state.all()).map(([name, status]) => [name, create(HealthCheckResponseSchema, { status })]),
      );
      return { statuses };
    },
    async *watch(req, context) {
      let changed: () => void = () => {};
      const unwatch = state.watch(() => changed());
      try {
        for (;;) {
          // Report before checking for the end: a shutdown changes the status and aborts in the same
          // tick, and the watcher must still hear NOT_SERVING.
          yield { status: state.statusOf(req.service) ?? ServingStatus.SERVICE_UNKNOWN };
          if (context.signal.aborted) return;
          await new Promise<void>((resolve) => {
            changed = resolve;
            context.signal.addEventListener("abort", () => resolve(), { once: true });
          });
        }
      } finally {
        unwatch();
      }
    },
  });
}
