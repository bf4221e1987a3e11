import { Code, ConnectError, errorInfoOf, serviceError } from "@qrplatform/platform";

/** The queue of renders that carry no account (callers that predate `account_id`): they share one. */
export const ANONYMOUS_ACCOUNT = "anonymous";

export interface RenderQueueOptions {
  /** Renders running at once, across every account: the size of the render pool. */
  readonly concurrency: number;
  /** Renders of one account running at once. */
  readonly perAccount: number;
  /** Renders of one account waiting to start; one more is refused at once with `render_queue_full`. */
  readonly queuedPerAccount: number;
}

/** How a render behaves when its account's queue is full. */
export interface RunOptions {
  /**
   * Wait for the account's turn instead of being refused: for work already admitted, such as the
   * remaining images of an archive whose first bytes are sent. Its caller bounds how many it has waiting.
   */
  readonly waitForTurn?: boolean;
}

/** A render waiting for its turn. */
interface Waiting {
  start(): void;
}

/** One account's renders: how many run, which wait, and when the account last had a turn. */
interface AccountLine {
  running: number;
  readonly waiting: Waiting[];
  /** The turn at which one of its renders last started; 0 for an account that has not had one yet. */
  lastTurn: number;
}

/**
 * Decides which render starts next so that one account's burst cannot starve another's export:
 * renders are bounded in total and per account, and a free place goes to the waiting account whose
 * last turn is the oldest, so each account with work waiting gets one render in turn (round-robin)
 * however many the others have queued. Each account's queue is bounded, so a burst is refused early
 * instead of waiting past every caller's deadline.
 */
export class RenderQueue {
  private readonly accounts = new Map<string, AccountLine>();
  private running = 0;
  private turns = 0;
  /** The most renders that ever ran at once; never above `concurrency`. */
  peakRunning = 0;

  constructor(private readonly options: RenderQueueOptions) {}

  /** Renders waiting for their turn, across every account. */
  get waiting(): number {
    let waiting = 0;
    for (const line of this.accounts.values()) waiting += line.waiting.length;
    return waiting;
  }

  /**
   * Runs `work` in the account's turn and answers its result. While the render waits, an abort of
   * `signal` drops it (it never starts) and rejects with CANCELED; once it runs, `work` is given the
   * signal and stops itself. A full queue refuses the render with `render_queue_full`, unless
   * `options.waitForTurn` says it waits anyway.
   */
  run<T>(
    account: string,
    work: (signal: AbortSignal) => Promise<T>,
    signal: AbortSignal,
    options: RunOptions = {},
  ): Promise<T> {
    if (signal.aborted) return Promise.reject(canceled());
    const line = this.lineOf(account);
    const canStartNow = line.running < this.options.perAccount && this.running < this.options.concurrency;
    if (!canStartNow && !options.waitForTurn && line.waiting.length >= this.options.queuedPerAccount) {
      this.forgetIfIdle(account, line);
      return Promise.reject(
        serviceError(
          Code.ResourceExhausted,
          "render_queue_full",
          "Too many exports of this account are waiting to be drawn; retry in a moment.",
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      const waiting: Waiting = {
        start: () => {
          signal.removeEventListener("abort", drop);
          Promise.resolve()
            .then(() => work(signal))
            .then(resolve, reject)
            .finally(() => this.finished(account, line));
        },
      };
      const drop = () => {
        line.waiting.splice(line.waiting.indexOf(waiting), 1);
        this.forgetIfIdle(account, line);
        reject(canceled());
      };
      signal.addEventListener("abort", drop, { once: true });
      line.waiting.push(waiting);
      this.dispatch();
    });
  }

  /** Starts waiting renders while there is room, the longest-unserved account first. */
  private dispatch(): void {
    while (this.running < this.options.concurrency) {
      let next: AccountLine | undefined;
      for (const line of this.accounts.values()) {
        if (line.waiting.length === 0 || line.running >= this.options.perAccount) continue;
        if (!next || line.lastTurn < next.lastTurn) next = line;
      }
      if (!next) return;
      next.lastTurn = ++this.turns;
      next.running++;
      this.running++;
      this.peakRunning = Math.max(this.peakRunning, this.running);
      next.waiting.shift()!.start();
    }
  }

  private finished(account: string, line: AccountLine): void {
    line.running--;
    this.running--;
    this.forgetIfIdle(account, line);
    this.dispatch();
  }

  private lineOf(account: string): AccountLine {
    let line = this.accounts.get(account);
    if (!line) {
      line = { running: 0, waiting: [], lastTurn: 0 };
      this.accounts.set(account, line);
    }
    return line;
  }

  private forgetIfIdle(account: string, line: AccountLine): void {
    if (line.running === 0 && line.waiting.length === 0) this.accounts.delete(account);
  }
}

/** Whether `error` is the refusal of a render because its account's queue was full. */
export function isQueueFull(error: unknown): boolean {
  return (
    error instanceof ConnectError &&
    error.code === Code.ResourceExhausted &&
    errorInfoOf(error)?.reason === "render_queue_full"
  );
}

/** The answer to a caller whose render was dropped because it gave up. */
export function canceled(): ConnectError {
  return new ConnectError("The render was cancelled: the caller gave up.", Code.Canceled);
}
