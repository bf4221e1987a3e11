import type { InvalidationBus } from "../redirects/invalidations.js";

/**
 * What the bus announced since the last batch: the hostnames of domains that were created, verified,
 * unverified or removed, or that everything must be listed again because announcements may have been
 * missed (the bus reconnected, or more piled up than a batch is worth).
 */
export type DomainChangeBatch = { resync: true } | { hostnames: string[] };

/** How long a batch waits, after its first announcement, for the rest of a burst. */
const GATHER_MS = 25;
/** Past this many hostnames waiting, the receiver lists everything instead: cheaper, and memory stays bounded. */
const MAX_WAITING_HOSTNAMES = 10_000;

/**
 * The domain announcements of the invalidation bus, gathered into batches for one WatchDomains
 * stream. It listens from its construction, so nothing announced after that is missed, whatever the
 * stream is doing meanwhile; announcements that arrive together (or while the stream sends the last
 * batch) become one batch. {@link close} stops listening.
 */
export class DomainChanges {
  readonly #waiting = new Set<string>();
  #resync = false;
  #wake: (() => void) | undefined;
  readonly #unsubscribe: () => void;

  constructor(bus: InvalidationBus) {
    this.#unsubscribe = bus.subscribe((event) => {
      if (event === "everything") this.#resync = true;
      else for (const hostname of event.hostnames ?? []) this.#waiting.add(hostname);
      if (this.#waiting.size > MAX_WAITING_HOSTNAMES) this.#resync = true;
      if (this.#resync) this.#waiting.clear();
      if (this.#resync || this.#waiting.size > 0) this.#wake?.();
    });
  }

  /** The next batch, once there is one; undefined as soon as `signal` is aborted. */
  async next(signal: AbortSignal): Promise<DomainChangeBatch | undefined> {
    if (!this.#pending()) {
      await abortable(signal, (done) => {
        this.#wake = done;
        return () => (this.#wake = undefined);
      });
    }
    // Let the rest of a burst arrive: one batch, one database read, one message.
    await abortable(signal, (done) => {
      const timer = setTimeout(done, GATHER_MS);
      return () => clearTimeout(timer);
    });
    if (signal.aborted) return undefined;
    if (this.#resync) {
      this.#resync = false;
      this.#waiting.clear();
      return { resync: true };
    }
    const hostnames = [...this.#waiting];
    this.#waiting.clear();
    return { hostnames };
  }

  /** Stops listening to the bus. */
  close(): void {
    this.#unsubscribe();
    this.#wake = undefined;
  }

  #pending(): boolean {
    return this.#resync || this.#waiting.size > 0;
  }
}

/** Waits until `start` calls `done`, or `signal` is aborted; `start` returns what undoes it. */
async function abortable(signal: AbortSignal, start: (done: () => void) => () => void): Promise<void> {
  if (signal.aborted) return;
  let undo = () => {};
  let onAbort = () => {};
  try {
    await new Promise<void>((resolve) => {
      onAbort = resolve;
      signal.addEventListener("abort", onAbort, { once: true });
      undo = start(resolve);
    });
  } finally {
    signal.removeEventListener("abort", onAbort);
    undo();
  }
}
