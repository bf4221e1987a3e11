import { mkdirSync } from "node:fs";
import { Kysely, PostgresDialect, sql } from "kysely";
import { PGlite } from "@electric-sql/pglite";
import { PGliteDialect } from "kysely-pglite-dialect";
import pg from "pg";
import type { MessagePort } from "node:worker_threads";
import { PgliteSession, PgliteThread } from "./pglite-thread.js";
import { traceQuery } from "./tracing.js";

/** Where a process keeps its data: a Postgres server when `databaseUrl` is set, else embedded PGlite. */
/**
 * The connection every service shares, before a service narrows it to its own schema's tables with
 * `withSchema(...) as Kysely<ItsTables>`. Migrations take it too: they are frozen in time and must not
 * import the application's table types.
 */
// biome-ignore lint/suspicious/noExplicitAny: the shared handle spans every schema; each service types its own tables.
export type SharedKysely = Kysely<any>;

export interface DatabaseConfig {
  /** A postgres:// connection string; when unset, PGlite is used. */
  databaseUrl?: string | undefined;
  /** The PGlite data directory; "memory://" keeps everything in memory. */
  dataDir: string;
  /** The most connections to hold open to a Postgres server. */
  poolSize?: number;
  /**
   * How long a query waits for a connection (a new one to be established, or a pooled one to come
   * free) before it fails; 3 s by default, so calls fail fast while the server is unreachable.
   */
  connectionTimeoutMs?: number;
  /**
   * PGlite only: run the database on a worker thread (see PgliteThread), so its statements never hold
   * up the thread that answers requests. The embedded platform does; tests and tools need not.
   */
  pgliteThread?: boolean;
  /** A session of another thread's PGlite thread (`Database.connectionForThread`), instead of a database of its own. */
  pglitePort?: MessagePort;
  /**
   * PGlite in memory only: the archive of a data directory (PGlite's `dumpDataDir`) to start from,
   * instead of initialising a new cluster, which is most of what opening one costs. Tests open many.
   */
  initialDataDir?: Blob;
}

/** An open database. `db` is schema-less; each service narrows it with `db.withSchema(...)`. */
export interface Database {
  // Services see their own typed tables; the connection itself is shared.
  readonly db: SharedKysely;
  /** Which engine is behind `db`. */
  readonly engine: "postgres" | "pglite";
  /** The connection pool's counts right now; only Postgres has a pool (PGlite is one connection in-process). */
  poolConnections?(): PoolConnections;
  /**
   * What another thread of this process passes to `openDatabase` to reach this same database: the
   * server's URL, or a new session of PGlite's thread. Absent for PGlite on the calling thread, which
   * no other thread can reach.
   */
  connectionForThread?(): ThreadConnection;
  /** Resolves once the database answers a trivial query; rejects with the driver's error when it cannot. */
  check(): Promise<void>;
  /** Closes every connection; PGlite keeps the process alive until this is called. */
  close(): Promise<void>;
}

/** See {@link Database.connectionForThread}; sent to the other thread, the port in its transfer list. */
export type ThreadConnection =
  | { databaseUrl: string; pglitePort?: undefined }
  | { pglitePort: MessagePort; databaseUrl?: undefined };

// Timestamps and counts come back as JS values the same way on both engines.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/** How the connections to a Postgres server are used. */
export interface PoolConnections {
  /** Connections open, busy or idle. */
  total: number;
  /** Open connections no query holds. */
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

/** Opens the database the configuration names. */
export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  const { databaseUrl } = config;
  if (databaseUrl) {
    const pool = new pg.Pool({
      connectionString: databaseUrl,
      max: config.poolSize ?? 10,
      connectionTimeoutMillis: config.connectionTimeoutMs ?? 3_000,
      // A server that vanishes without closing the socket (a network partition) is noticed by TCP
      // keepalive instead of a query waiting forever.
      keepAlive: true,
    });
    // A client whose server terminates its backend (a restart: 57P01) or whose socket resets emits
    // 'error', and an EventEmitter without a listener throws it, ending the process. The pool listens
    // only while a client is idle (it then discards the client and re-emits the error on itself);
    // a client checked out by kysely, between two queries of a transaction or just after its query
    // failed, has no listener at all. This one stays for the client's whole life: the query in flight
    // has already failed with the error, and the pool discards the client when it is released, since
    // it is no longer queryable.
    pool.on("connect", (client) => {
      client.on("error", () => {});
      // The statements here are short, but a large batch of scans plans above jit_above_cost, and
      // compiling it took 70 ms of the server's CPU each time, more than running it. Queued before
      // any query of the pool's; a server that does not know the setting keeps its default.
      client.query("SET jit = off").catch(() => {});
    });
    pool.on("error", () => {});
    const db = new Kysely({ dialect: new PostgresDialect({ pool }), log: traceQuery });
    return {
      db,
      engine: "postgres",
      poolConnections: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
      connectionForThread: () => ({ databaseUrl }),
      check: () => checkOf(db),
      close: () => db.destroy(),
    };
  }
  if (config.pglitePort) {
    const session = new PgliteSession(config.pglitePort);
    const db = new Kysely({ dialect: new PGliteDialect(session as unknown as PGlite), log: traceQuery });
    return { db, engine: "pglite", check: () => checkOf(db), close: () => db.destroy() };
  }
  if (!config.dataDir.startsWith("memory://")) mkdirSync(config.dataDir, { recursive: true });
  // The dialect needs only `query` and `close`, which the thread offers too.
  const pglite = config.pgliteThread
    ? await PgliteThread.open(config.dataDir)
    : await PGlite.create(config.dataDir, {
        parsers: { 20: (value: string) => Number(value) },
        loadDataDir: config.initialDataDir,
      });
  const db = new Kysely({ dialect: new PGliteDialect(pglite as PGlite), log: traceQuery });
  return {
    db,
    engine: "pglite",
    connectionForThread: pglite instanceof PgliteThread ? () => ({ pglitePort: pglite.connectPort() }) : undefined,
    check: () => checkOf(db),
    // Kysely's destroy closes the PGlite instance through the dialect.
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}

/** The cheapest query that needs the server: readiness asks it periodically. */
async function checkOf(db: SharedKysely): Promise<void> {
  await sql`select 1`.execute(db);
}
