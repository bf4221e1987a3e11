import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isDatabaseUnavailable, openDatabase, type Database } from "@qrplatform/db";
import {
  adminQuery,
  createScratchDatabase,
  hasPostgresServer,
  startPrivatePostgres,
  type PrivatePostgres,
  type ScratchDatabase,
} from "@qrplatform/db/testing";

const caught = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

// Terminating one backend of our own scratch database disturbs nobody else on the shared server.
describe.skipIf(!process.env.DATABASE_URL)("a backend terminated under a checked-out connection", () => {
  let scratch: ScratchDatabase;
  let database: Database;

  beforeAll(async () => {
    scratch = (await createScratchDatabase())!;
    database = await openDatabase({ databaseUrl: scratch.url, dataDir: "" });
  });
  afterAll(async () => {
    await database?.close();
    await scratch?.drop();
  });

  it("fails the transaction as unavailable, does not end the process, and the next query reconnects", async () => {
    const error = await caught(
      database.db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        // 57P01, as a restart sends to every backend, while the connection is checked out between queries.
        await adminQuery(process.env.DATABASE_URL!, `select pg_terminate_backend(${rows[0]!.pid}, 5000)`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        await sql`select 1`.execute(trx);
      }),
    );
    expect(isDatabaseUnavailable(error)).toBe(true);
    await expect(database.check()).resolves.toBeUndefined();
  });
});

// A server of the test's own, stopped and started; skipped where the Postgres pass does not run.
describe.skipIf(!process.env.DATABASE_URL || !hasPostgresServer())("a private server that stops and starts", () => {
  let server: PrivatePostgres;
  let database: Database;

  beforeAll(async () => {
    server = await startPrivatePostgres();
    database = await openDatabase({ databaseUrl: server.url, dataDir: "" });
  });
  afterAll(async () => {
    await database?.close();
    await server?.close();
  });

  it("fails queries fast as unavailable while it is down, and answers again once it is back", async () => {
    await database.check();
    await server.stop("immediate");
    const error = await caught(database.check());
    expect(isDatabaseUnavailable(error)).toBe(true);
    await server.start();
    await expect(database.check()).resolves.toBeUndefined();
  });

  it("survives a fast restart in the middle of a transaction", async () => {
    let restarted: Promise<void> | undefined;
    const error = await caught(
      database.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        restarted = server.restart({ mode: "fast" });
        await sql`select pg_sleep(5)`.execute(trx);
      }),
    );
    await restarted;
    expect(isDatabaseUnavailable(error)).toBe(true);
    await expect(database.check()).resolves.toBeUndefined();
  });
});
