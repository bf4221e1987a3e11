/**
 * A background job that runs one pass at a time: the first at once, each next one `intervalMs` after
 * the last ended, so a slow pass is never overlapped by the next. A failed pass goes to `onError` and
 * the next one runs on time, so a job outlives a dependency that is away for a while. Its timer never
 * keeps a process alive.
 */
export class PeriodicPass {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  /**
   * @param pass one pass of the job
   * @param intervalMs the pause between the end of a pass and the start of the next
   * @param onError what to do with a pass that failed (log it, count it)
   */
  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Starts the passes; starting passes that run already changes nothing. */
  start(): void {
    if (this.timer) return;
    const tick = () => {
      this.running = this.pass()
        .then(() => undefined, this.onError)
        .finally(() => {
          this.running = undefined;
          if (this.timer) this.timer = setTimeout(tick, this.intervalMs).unref();
        });
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  /** Whether passes are scheduled: started and not stopped. A pass that loops may ask it to end early. */
  get active(): boolean {
    return this.timer !== undefined;
  }

  /** Stops the passes, waiting for one under way. */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
