// The entry file of the embedded database's thread (see pglite-thread.ts): it owns the PGlite
// instance and answers the queries of its sessions, one statement at a time. The parent is one
// session; every port the parent hands over (PgliteThread.connectPort) is another, so a second thread
// of the process reaches the database without going through the parent's.
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import type { ThreadReply, ThreadRequest } from "./pglite-thread.js";

const { dataDir } = workerData as { dataDir: string };

/** What crosses back to the parent of an error: its message and the fields Postgres gives it (code, detail, constraint...). */
function plainError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const fields: Record<string, unknown> = { message: error.message, name: error.name };
  for (const [key, value] of Object.entries(error)) {
    if (value === undefined || typeof value === "function" || typeof value === "object") continue;
    fields[key] = value;
  }
  return fields;
}

/** A client of the database: the parent, or a port another thread holds. */
interface Session {
  post(reply: ThreadReply): void;
  /** Its port closed: nothing more is sent to it, and its open transaction is rolled back. */
  ended?: boolean;
}

type Query = Extract<ThreadRequest, { kind: "query" }>;

/**
 * The statements waiting, in the order they came. PGlite is one connection: a statement of one session
 * must not run inside another session's open transaction (it would commit or roll back with it), so
 * while a session's transaction is open only that session's statements run, and the others wait.
 */
class Sessions {
  private readonly waiting: { session: Session; request: Query }[] = [];
  private running: Session | undefined;
  private inTransaction: Session | undefined;

  constructor(private readonly pglite: PGlite) {}

  add(session: Session, request: Query): void {
    this.waiting.push({ session, request });
    this.next();
  }

  /** A session that went away: its waiting statements are dropped, and its open transaction rolled back. */
  end(session: Session): void {
    session.ended = true;
    for (let i = this.waiting.length - 1; i >= 0; i--)
      if (this.waiting[i]!.session === session) this.waiting.splice(i, 1);
    // A statement of its own still running rolls back when it is done (see next).
    if (this.inTransaction === session && this.running !== session) this.rollBack(session);
  }

  private rollBack(session: Session): void {
    this.waiting.unshift({ session, request: { kind: "query", id: 0, sql: "rollback", params: [] } });
    this.next();
  }

  private next(): void {
    if (this.running) return;
    const index =
      this.inTransaction === undefined ? 0 : this.waiting.findIndex((entry) => entry.session === this.inTransaction);
    if (index < 0 || index >= this.waiting.length) return;
    const [{ session, request }] = this.waiting.splice(index, 1) as [(typeof this.waiting)[number]];
    this.running = session;
    const answer = (reply: ThreadReply) => {
      if (!session.ended) session.post(reply);
    };
    this.pglite
      .query(request.sql, request.params)
      .then(
        (result) =>
          answer({
            id: request.id,
            ok: true,
            result: { rows: result.rows as Record<string, unknown>[], affectedRows: result.affectedRows },
          }),
        (error: unknown) => answer({ id: request.id, ok: false, error: plainError(error) }),
      )
      .finally(() => {
        this.inTransaction = this.pglite.isInTransaction() ? session : undefined;
        this.running = undefined;
        if (this.inTransaction?.ended) this.rollBack(this.inTransaction);
        else this.next();
      });
  }
}

const parent: Session = { post: (reply) => parentPort!.postMessage(reply) };

try {
  // Counts (int8) come back as numbers, as on the Postgres driver.
  const pglite = await PGlite.create(dataDir, { parsers: { 20: (value: string) => Number(value) } });
  const sessions = new Sessions(pglite);
  parentPort!.on("message", (request: ThreadRequest) => {
    switch (request.kind) {
      case "query":
        sessions.add(parent, request);
        return;
      case "session": {
        const port: MessagePort = request.port;
        const session: Session = { post: (reply) => port.postMessage(reply) };
        port.on("message", (query: Query) => sessions.add(session, query));
        // Closed from either side, or the thread holding the other end ended.
        port.on("close", () => sessions.end(session));
        return;
      }
      case "close":
        void pglite.close().then(
          () => parent.post({ id: request.id, ok: true, result: { rows: [] } }),
          (error: unknown) => parent.post({ id: request.id, ok: false, error: plainError(error) }),
        );
        return;
    }
  });
  parent.post({ id: 0, ok: true, result: { rows: [] } });
} catch (error) {
  parent.post({ id: 0, ok: false, error: plainError(error) });
}
