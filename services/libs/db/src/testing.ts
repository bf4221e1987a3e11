import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { appendFile, chown, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { Kysely } from "kysely";
import { PGliteDialect } from "kysely-pglite-dialect";
import pg from "pg";
import { freePort } from "@qrplatform/testing";
import { openDatabase, type Database, type SharedKysely } from "./database.js";

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

const NODE_MODULES = fileURLToPath(new URL("../../../../node_modules/", import.meta.url));
const PGLITE_VERSION = (
  JSON.parse(readFileSync(join(NODE_MODULES, "@electric-sql/pglite/package.json"), "utf8")) as { version: string }
).version;

/**
 * A state that many in-memory test databases start from, such as every service's migrations applied.
 * The first process that needs it builds it and keeps the cluster's archive (under
 * node_modules/.cache, named by the PGlite version, `name` and a hash of `sources`); later ones load
 * the archive instead of running initdb and the migrations again, which is most of what starting an
 * in-memory database costs. An archive of older sources is removed when the new one is written.
 */
export interface DatabaseTemplate {
  readonly name: string;
  /** Files and folders (relative to the repository root) whose content decides the state: a change to them builds it anew. */
  readonly sources: readonly string[];
  /** Brings an empty database to the state. */
  prepare(db: SharedKysely): Promise<void>;
}

const ARCHIVES = join(NODE_MODULES, ".cache/qr-platform");

/** A short hash of the files under these paths (relative to the repository root). */
function contentHash(paths: readonly string[]): string {
  const root = join(NODE_MODULES, "..");
  const hash = createHash("sha256");
  const add = (path: string) => {
    const full = join(root, path);
    if (statSync(full).isDirectory()) {
      for (const entry of readdirSync(full).sort()) add(join(path, entry));
    } else {
      hash.update(path).update(readFileSync(full));
    }
  };
  for (const path of paths) add(path);
  return hash.digest("hex").slice(0, 16);
}

/** The archives this process has read or built, by template name: a test file opening several databases reads each once. */
const archivesRead = new Map<string, Promise<Blob>>();

/** The archive of an empty cluster (`template` unset) or of a template's state, built and kept if it is not there yet. */
function pgliteArchive(template?: DatabaseTemplate): Promise<Blob> {
  const name = template?.name ?? "empty";
  let archive = archivesRead.get(name);
  if (!archive) {
    archive = readOrBuildArchive(template);
    // A failed build is not kept: the next database tries again.
    archive.catch(() => archivesRead.delete(name));
    archivesRead.set(name, archive);
  }
  return archive;
}

async function readOrBuildArchive(template?: DatabaseTemplate): Promise<Blob> {
  const prefix = `pglite-${PGLITE_VERSION}-${template?.name ?? "empty"}`;
  const path = join(ARCHIVES, template ? `${prefix}-${contentHash(template.sources)}.tar` : `${prefix}.tar`);
  if (existsSync(path)) return new Blob([await readFile(path)]);
  const pglite = await PGlite.create("memory://", { loadDataDir: template ? await pgliteArchive() : undefined });
  if (template) {
    const db = new Kysely({ dialect: new PGliteDialect(pglite) });
    await template.prepare(db);
  }
  const archive = await pglite.dumpDataDir("none");
  await pglite.close();
  await mkdir(ARCHIVES, { recursive: true });
  // Written aside and renamed: processes building the same archive at once each write a whole one, and none reads half of one.
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(partial, Buffer.from(await archive.arrayBuffer()));
  await rename(partial, path);
  for (const stale of readdirSync(ARCHIVES).filter(
    (file) => file.startsWith(`${prefix}-`) && file.endsWith(".tar") && join(ARCHIVES, file) !== path,
  )) {
    await rm(join(ARCHIVES, stale), { force: true });
  }
  return archive;
}

/** Builds the empty cluster's archive if it is not there yet: the test run's global setup calls this once. */
export async function prepareEmptyPgliteArchive(): Promise<void> {
  await pgliteArchive();
}

/**
 * A throwaway database for one test file: a fresh Postgres database on the server named by
 * DATABASE_URL (dropped on close), or an in-memory PGlite when DATABASE_URL is unset, started from the
 * template's state when one is given (on Postgres the services' own start brings a fresh database there).
 */
export async function openTestDatabase(template?: DatabaseTemplate): Promise<Database> {
  const scratch = await createScratchDatabase();
  if (!scratch) return openDatabase({ dataDir: "memory://", initialDataDir: await pgliteArchive(template) });
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
