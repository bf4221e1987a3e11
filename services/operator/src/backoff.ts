// Exponential backoff with jitter: for a key that keeps failing, an informer whose watch keeps ending,
// a DomainService stream that keeps breaking.

/** The first delay and the cap, in milliseconds. */
export interface BackoffSettings {
  baseMs: number;
  maxMs: number;
}

/**
 * The delay before attempt `attempt` (1 for the first retry): the base doubled per attempt up to the
 * cap, then drawn from its upper half, so replicas and keys that failed together do not retry together.
 */
export function backoffDelay(attempt: number, settings: BackoffSettings, random: () => number = Math.random): number {
  const ceiling = Math.min(settings.maxMs, settings.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** The retries of one thing: each failure waits longer, a success starts over. */
export class Backoff {
  private failures = 0;

  constructor(private readonly settings: BackoffSettings) {}

  /** How many failures in a row so far. */
  get attempt(): number {
    return this.failures;
  }

  /** Counts a failure and returns how long to wait before the next attempt. */
  next(): number {
    this.failures += 1;
    return backoffDelay(this.failures, this.settings);
  }

  /** A success: the next failure waits the base delay again. */
  reset(): void {
    this.failures = 0;
  }
}
