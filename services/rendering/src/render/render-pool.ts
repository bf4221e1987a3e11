import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import type { DrawTask } from "./draw.js";
import type { Drawer } from "./renderer.js";

/**
 * The worker entry beside this file, with this file's own extension: `.ts` when the code runs as
 * TypeScript (tsx, vitest), `.js` once compiled.
 */
const WORKER_FILE = new URL(`./render-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/**
 * A pool thread loads its entry with Node's own loader, which cannot read our TypeScript (its imports
 * name `.js` files that exist as `.ts`). Under tsx the threads inherit tsx's loader with the parent's
 * options; anywhere else that runs TypeScript (vitest) they are given it. Compiled JavaScript needs nothing.
 */
function workerExecArgv(): string[] | undefined {
  if (!WORKER_FILE.pathname.endsWith(".ts")) return undefined;
  if (process.execArgv.some((arg) => /\btsx\b/.test(arg))) return undefined;
  return ["--import", import.meta.resolve("tsx")];
}

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
      execArgv: workerExecArgv(),
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
