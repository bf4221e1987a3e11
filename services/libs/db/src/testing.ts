import { randomBytes } from "node:crypto";
import pg from "pg";
import { openDatabase, type Database } from "./database.js";

/**
 * A throwaway database for one test file: a fresh Postgres database on the server named by
 * DATABASE_URL (dropped on close), or an in-memory PGlite when DATABASE_URL is unset.
 */
export async function openTestDatabase(): Promise<Database> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) return openDatabase({ dataDir: "memory://" });

  const name = `qrp_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();

  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: "" });
  return {
    ...database,
    async close() {
      await database.close();
      const dropper = new pg.Client({ connectionString: serverUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    },
  };
}
