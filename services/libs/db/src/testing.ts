import { randomBytes } from "node:crypto";
import pg from "pg";
import { openDatabase, type Database } from "./database.js";

/** A throwaway Postgres database: its connection string, and how to drop it. */
export interface ScratchDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/** Runs one statement on a Postgres server with a connection of its own. */
export async function adminQuery(serverUrl: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A fresh, empty database on the Postgres server named by DATABASE_URL, for tests that hand a
 * connection string to other processes; undefined when DATABASE_URL is unset.
 */
export async function createScratchDatabase(): Promise<ScratchDatabase | undefined> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) return undefined;
  const name = `qrp_test_${randomBytes(6).toString("hex")}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * A throwaway database for one test file: a fresh Postgres database on the server named by
 * DATABASE_URL (dropped on close), or an in-memory PGlite when DATABASE_URL is unset.
 */
export async function openTestDatabase(): Promise<Database> {
  const scratch = await createScratchDatabase();
  if (!scratch) return openDatabase({ dataDir: "memory://" });
  const database = await openDatabase({ databaseUrl: scratch.url, dataDir: "" });
  return {
    ...database,
    async close() {
      await database.close();
      await scratch.drop();
    },
  };
}
