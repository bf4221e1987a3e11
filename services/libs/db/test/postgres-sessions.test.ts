// The sessions the pool opens on a Postgres server: set up before the first query any caller sends.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@qrplatform/db";

describe.skipIf(!process.env.DATABASE_URL)("a Postgres session of the pool", () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: "" });
  });
  afterAll(() => database?.close());

  it("compiles no statement (jit off), on every connection, from its first query", async () => {
    // Several at once: each takes a connection of its own, opened for it.
    const settings = await Promise.all(
      Array.from({ length: 3 }, () =>
        database.db.transaction().execute(async (trx) => {
          const { rows } = await sql<{ jit: string; pid: number }>`
            select current_setting('jit') as jit, pg_backend_pid() as pid, pg_sleep(0.05)`.execute(trx);
          return rows[0]!;
        }),
      ),
    );
    expect(new Set(settings.map((setting) => setting.pid)).size).toBe(3);
    expect(settings.map((setting) => setting.jit)).toEqual(["off", "off", "off"]);
  });
});
