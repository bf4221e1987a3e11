import { Piscina } from "piscina";
import { workerEntry, workerExecArgv } from "@qrplatform/platform";
import type { DrawTask } from "./draw.js";
import type { Drawer } from "./renderer.js";

/** The pool threads' entry, beside this file. */
const WORKER_FILE = workerEntry("render-worker", import.meta.url);

/** An idle thread beyond the first is stopped after this long; the first stays, so an export after a quiet spell starts at once. */
const IDLE_TIMEOUT_MS = 60_000;

/**
 * Worker threads that draw images (draw.ts), so the thread that answers requests (and, under
 * `npm start`, the whole platform's) never waits on image work. The threads start at the first
 * render, not when the pool is made.
 */
export class RenderPool implements Drawer {
  private pool: Piscina<DrawTask, Uint8Array> | undefined;

  constructor(private readonly threads: number) {}

  /** Draws the image on a pool thread; an abort of `signal` stops the thread mid-render and rejects. */
  draw(task: DrawTask, signal: AbortSignal): Promise<Uint8Array> {
    this.pool ??= new Piscina({
      filename: WORKER_FILE.href,
      minThreads: 1,
      maxThreads: this.threads,
      idleTimeout: IDLE_TIMEOUT_MS,
      execArgv: workerExecArgv(WORKER_FILE),
    });
    return this.pool.run(task, { signal });
  }

  /** Stops every thread; a render still running is abandoned. */
  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.destroy();
  }
}
