import { Worker } from "node:worker_threads";
import { workerEntry, workerExecArgv } from "@qrplatform/platform";

/** A message to the database thread: a statement with its parameters, or the request to close. */
export type ThreadRequest = { kind: "query"; id: number; sql: string; params: unknown[] } | { kind: "close"; id: number };
/** The thread's answer to request `id` (0: whether it started). */
export type ThreadReply =
  | { id: number; ok: true; result: { rows: Record<string, unknown>[]; affectedRows?: number | undefined } }
  | { id: number; ok: false; error: Record<string, unknown> };

/** The database thread's entry, beside this file. */
const WORKER_FILE = workerEntry("pglite-worker", import.meta.url);

/**
 * PGlite on a thread of its own, with the part of PGlite's interface kysely's PGlite dialect uses
 * (`query`, `close`). PGlite runs Postgres as WebAssembly on whichever thread owns it, so a statement
 * that takes 30 ms would hold up every request of the process that answers HTTP; here it holds up
 * only the database thread, and the request thread pays a message each way.
 */
export class PgliteThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (reply: ThreadReply) => void }>();
  private nextId = 1;
  private exited: Error | undefined;
  closed = false;

  private constructor(dataDir: string) {
    this.worker = new Worker(WORKER_FILE, { workerData: { dataDir }, execArgv: workerExecArgv(WORKER_FILE) });
    this.worker.on("message", (reply: ThreadReply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      waiting?.resolve(reply);
    });
    const fail = (error: Error) => {
      this.exited ??= error;
      for (const [id, waiting] of this.pending) waiting.resolve({ id, ok: false, error: { message: error.message } });
      this.pending.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => fail(new Error(`the database thread exited (${code})`)));
  }

  /** Starts the thread and opens PGlite in `dataDir` ("memory://" for a database in memory). */
  static async open(dataDir: string): Promise<PgliteThread> {
    const thread = new PgliteThread(dataDir);
    const started = await new Promise<ThreadReply>((resolve) => thread.pending.set(0, { resolve }));
    if (!started.ok) {
      await thread.worker.terminate();
      throw errorFrom(started.error);
    }
    return thread;
  }

  async query(sql: string, params: unknown[] = []): Promise<{ rows: Record<string, unknown>[]; affectedRows?: number | undefined }> {
    const reply = await this.send({ kind: "query", id: this.nextId++, sql, params });
    if (!reply.ok) throw errorFrom(reply.error);
    return reply.result;
  }

  /** Closes PGlite (its files are whole afterwards) and stops the thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const reply = await this.send({ kind: "close", id: this.nextId++ });
    await this.worker.terminate();
    if (!reply.ok) throw errorFrom(reply.error);
  }

  private send(request: ThreadRequest): Promise<ThreadReply> {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve) => {
      this.pending.set(request.id, { resolve });
      this.worker.postMessage(request);
    });
  }
}

/** An Error carrying the fields the thread sent (a Postgres error's code, detail, constraint...). */
function errorFrom(fields: Record<string, unknown>): Error {
  const error = new Error(String(fields.message ?? "database error"));
  for (const [key, value] of Object.entries(fields)) if (key !== "message" && key !== "stack") Object.assign(error, { [key]: value });
  return error;
}
