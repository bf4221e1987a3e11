import { mkdirSync } from "node:fs";
import { Kysely, PostgresDialect } from "kysely";
import { PGlite } from "@electric-sql/pglite";
import { PGliteDialect } from "kysely-pglite-dialect";
import pg from "pg";

/** Where a process keeps its data: a Postgres server when `databaseUrl` is set, else embedded PGlite. */
export interface DatabaseConfig {
  /** A postgres:// connection string; when unset, PGlite is used. */
  databaseUrl?: string | undefined;
  /** The PGlite data directory; "memory://" keeps everything in memory. */
  dataDir: string;
  /** The most connections to hold open to a Postgres server. */
  poolSize?: number;
}

/** An open database. `db` is schema-less; each service narrows it with `db.withSchema(...)`. */
export interface Database {
  // Services see their own typed tables; the connection itself is shared.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly db: Kysely<any>;
  /** Which engine is behind `db`. */
  readonly engine: "postgres" | "pglite";
  /** Closes every connection; PGlite keeps the process alive until this is called. */
  close(): Promise<void>;
}

// Timestamps and counts come back as JS values the same way on both engines.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/** Opens the database the configuration names. */
export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  if (config.databaseUrl) {
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: config.poolSize ?? 10 });
    // An idle connection that the server drops (a restart, a terminated backend) is discarded by the
    // pool and replaced on demand; without a listener its error event would crash the process.
    pool.on("error", () => {});
    const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
    return { db, engine: "postgres", close: () => db.destroy() };
  }
  if (!config.dataDir.startsWith("memory://")) mkdirSync(config.dataDir, { recursive: true });
  const pglite = await PGlite.create(config.dataDir, { parsers: { 20: (value: string) => Number(value) } });
  const db = new Kysely({ dialect: new PGliteDialect(pglite) });
  return {
    db,
    engine: "pglite",
    // Kysely's destroy closes the PGlite instance through the dialect.
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}
