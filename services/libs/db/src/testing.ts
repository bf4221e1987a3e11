import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { appendFile, chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "@qrplatform/platform/testing";
import { openDatabase, type Database } from "./database.js";

const execFileAsync = promisify(execFile);

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

/** Where Debian puts each PostgreSQL version's server binaries. */
const POSTGRES_LIB = "/usr/lib/postgresql";

/** The bin directory of the newest PostgreSQL server installed, or undefined when there is none. */
function postgresBinDir(): string | undefined {
  let versions: string[];
  try {
    versions = readdirSync(POSTGRES_LIB);
  } catch {
    return undefined;
  }
  return versions
    .filter((version) => /^\d+$/.test(version))
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => join(POSTGRES_LIB, version, "bin"))
    .find((bin) => existsSync(join(bin, "initdb")) && existsSync(join(bin, "pg_ctl")));
}

/** Whether a PostgreSQL server can be started by {@link startPrivatePostgres} on this machine. */
export const hasPostgresServer = (): boolean => postgresBinDir() !== undefined;

/** How a private server stops: "fast" ends every session with 57P01 first, "immediate" drops them as a crash would. */
export type PostgresStopMode = "fast" | "immediate";

/** A PostgreSQL server of the test's own, which it may stop and restart without disturbing anyone. */
export interface PrivatePostgres {
  /** The connection string of its `postgres` database (user postgres, no password). */
  readonly url: string;
  /** Stops the server and starts it again, with the same data. */
  restart(options: { mode: PostgresStopMode }): Promise<void>;
  stop(mode: PostgresStopMode): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its files. */
  close(): Promise<void>;
}

/**
 * Starts a throwaway PostgreSQL server for tests that take the database away: a fresh cluster in a
 * temporary directory (trust authentication, fsync off, commits as durable as the server's own), listening on 127.0.0.1 at a free port with
 * its socket in that directory. The shared server at DATABASE_URL is never touched. initdb and postgres
 * refuse to run as root, so as root they run as the `postgres` user. Throws when no server binaries
 * are installed; see {@link hasPostgresServer}.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(`No PostgreSQL server under ${POSTGRES_LIB}; install Debian's postgresql package.`);
  const dir = await mkdtemp(join(tmpdir(), "qrp-postgres-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await chownToPostgres(dir);
  const run = async (tool: string, args: string[]) => {
    const [command, commandArgs] = asRoot
      ? ["runuser", ["-u", "postgres", "--", join(bin, tool), ...args]]
      : [join(bin, tool), args];
    await execFileAsync(command, commandArgs, { cwd: dir });
  };
  const port = await freePort();
  await run("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
  await appendFile(
    join(data, "postgresql.conf"),
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      // Only the operating system's crash loses what fsync would have kept; an immediate stop does
      // not. synchronous_commit stays on: off, an immediate stop would lose commits already reported.
      "fsync = off",
      "full_page_writes = off",
      "",
    ].join("\n"),
  );
  const logFile = join(dir, "server.log");
  const start = () => run("pg_ctl", ["start", "-D", data, "-l", logFile, "-w", "-t", "30"]);
  const stop = (mode: PostgresStopMode) => run("pg_ctl", ["stop", "-D", data, "-m", mode, "-w", "-t", "30"]);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async restart({ mode }) {
      await stop(mode);
      await start();
    },
    async close() {
      await stop("immediate").catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function chownToPostgres(path: string): Promise<void> {
  const { stdout } = await execFileAsync("id", ["-u", "postgres"]);
  const { stdout: group } = await execFileAsync("id", ["-g", "postgres"]);
  await chown(path, Number(stdout.trim()), Number(group.trim()));
}
