import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import { workerEntry, workerExecArgv } from "@qrplatform/platform";

/**
 * A message to the database thread: a statement with its parameters; from the parent only, a port
 * that is a session of its own, or the request to close.
 */
export type ThreadRequest =
  | { kind: "query"; id: number; sql: string; params: unknown[] }
  | { kind: "session"; port: MessagePort }
  | { kind: "close"; id: number };
/** The thread's answer to request `id` (0: whether it started). */
export type ThreadReply =
  | { id: number; ok: true; result: { rows: Record<string, unknown>[]; affectedRows?: number | undefined } }
  | { id: number; ok: false; error: Record<string, unknown> };

type QueryResult = { rows: Record<string, unknown>[]; affectedRows?: number | undefined };

/** The database thread's entry, beside this file. */
const WORKER_FILE = workerEntry("pglite-worker", import.meta.url);

/** A Worker or a MessagePort: what a session of the database thread talks through. */
interface ThreadPort {
  postMessage(message: ThreadRequest, transfer?: MessagePort[]): void;
  on(event: "message", listener: (reply: ThreadReply) => void): unknown;
}

/**
 * The part of PGlite's interface kysely's PGlite dialect uses (`query`), as messages to the database
 * thread and their answers, matched by id.
 */
class ThreadClient {
  private readonly pending = new Map<number, (reply: ThreadReply) => void>();
  private nextId = 1;
  private gone: Error | undefined;

  constructor(protected readonly port: ThreadPort) {
    port.on("message", (reply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      waiting?.(reply);
    });
  }

  async query(sql: string, params: unknown[] = []): Promise<QueryResult> {
    const reply = await this.send({ kind: "query", id: this.newId(), sql, params });
    if (!reply.ok) throw errorFrom(reply.error);
    return reply.result;
  }

  /** The thread or the port is gone: what waits fails, and so does everything asked after. */
  protected fail(error: Error): void {
    this.gone ??= error;
    for (const [id, waiting] of this.pending) waiting({ id, ok: false, error: { message: error.message } });
    this.pending.clear();
  }

  protected waitFor(id: number): Promise<ThreadReply> {
    return new Promise((resolve) => this.pending.set(id, resolve));
  }

  protected send(request: Extract<ThreadRequest, { id: number }>): Promise<ThreadReply> {
    if (this.gone) return Promise.reject(this.gone);
    const reply = this.waitFor(request.id);
    this.port.postMessage(request);
    return reply;
  }

  protected newId(): number {
    return this.nextId++;
  }
}

/**
 * PGlite on a thread of its own, with the part of PGlite's interface kysely's PGlite dialect uses
 * (`query`, `close`). PGlite runs Postgres as WebAssembly on whichever thread owns it, so a statement
 * that takes 30 ms would hold up every request of the process that answers HTTP; here it holds up
 * only the database thread, and the request thread pays a message each way. Other threads of the
 * process open sessions of their own (`connectPort`, then {@link PgliteSession}).
 */
export class PgliteThread extends ThreadClient {
  closed = false;

  private constructor(private readonly worker: Worker) {
    super(worker);
    worker.on("error", (error) => this.fail(error));
    worker.on("exit", (code) => this.fail(new Error(`the database thread exited (${code})`)));
  }

  /** Starts the thread and opens PGlite in `dataDir` ("memory://" for a database in memory). */
  static async open(dataDir: string): Promise<PgliteThread> {
    const thread = new PgliteThread(
      new Worker(WORKER_FILE, { workerData: { dataDir }, execArgv: workerExecArgv(WORKER_FILE) }),
    );
    const started = await thread.waitFor(0);
    if (!started.ok) {
      await thread.worker.terminate();
      throw errorFrom(started.error);
    }
    return thread;
  }

  /**
   * A new session of the database thread, for another thread of this process to open as a database of
   * its own (`openDatabase({ pglitePort })`): its statements go straight to the database thread. While
   * one session's transaction is open, the others' statements wait for it to end; a session whose port
   * closes (its thread ended) has its open transaction rolled back.
   */
  connectPort(): MessagePort {
    const { port1, port2 } = new MessageChannel();
    this.port.postMessage({ kind: "session", port: port2 }, [port2]);
    return port1;
  }

  /** Closes PGlite (its files are whole afterwards) and stops the thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const reply = await this.send({ kind: "close", id: this.newId() });
    await this.worker.terminate();
    if (!reply.ok) throw errorFrom(reply.error);
  }
}

/** A session of a database thread, over the port `PgliteThread.connectPort` made in another thread. */
export class PgliteSession extends ThreadClient {
  constructor(private readonly messagePort: MessagePort) {
    super(messagePort);
    messagePort.on("close", () => this.fail(new Error("the database thread's session closed")));
  }

  /** Ends the session; the database stays open for the thread that owns it. */
  async close(): Promise<void> {
    this.messagePort.close();
  }
}

/** An Error carrying the fields the thread sent (a Postgres error's code, detail, constraint...). */
function errorFrom(fields: Record<string, unknown>): Error {
  const error = new Error(String(fields.message ?? "database error"));
  for (const [key, value] of Object.entries(fields))
    if (key !== "message" && key !== "stack") Object.assign(error, { [key]: value });
  return error;
}
