import { create, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import {
  Health,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "@qrplatform/api/grpc-health";

/**
 * The state behind grpc.health.v1: SERVING for the server ("") and every registered service until
 * {@link HealthState.shutDown}, which turns all of them NOT_SERVING so load balancers drain first.
 */
export class HealthState {
  readonly #names: string[];
  #serving = true;
  readonly #watchers = new Set<() => void>();

  constructor(services: readonly DescService[]) {
    this.#names = ["", ...services.map((s) => s.typeName)];
  }

  /** The status of one service, or undefined for a service this server does not host. */
  statusOf(service: string): ServingStatus | undefined {
    if (!this.#names.includes(service)) return undefined;
    return this.#serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  }

  /** Every hosted service with its status. */
  all(): Record<string, ServingStatus> {
    return Object.fromEntries(this.#names.map((name) => [name, this.statusOf(name)!]));
  }

  /** Marks everything NOT_SERVING and tells watchers. */
  shutDown(): void {
    this.#serving = false;
    for (const notify of this.#watchers) notify();
  }

  /** Calls `notify` on every status change until the returned function is called. */
  watch(notify: () => void): () => void {
    this.#watchers.add(notify);
    return () => this.#watchers.delete(notify);
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
