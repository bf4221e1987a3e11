// The embedded database on a thread of its own: the same answers, errors and transactions as PGlite
// in the process, and a request thread that keeps turning while a long statement runs.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isUniqueViolation } from "@qrplatform/platform";
import { openDatabase, type Database } from "../src/database.js";

let database: Database;
beforeAll(async () => {
  database = await openDatabase({ dataDir: "memory://", pgliteThread: true });
});
afterAll(() => database?.close());

describe("PGlite on a thread", () => {
  it("answers counts as numbers, times as dates and bytes as bytes", async () => {
    const { rows } = await sql<{ n: number; at: Date; bytes: Uint8Array }>`
      select 9007199254740991::int8 as n, '2026-11-23T10:00:00Z'::timestamptz as at, '\\x0102ff'::bytea as bytes`.execute(database.db);
    expect(rows).toEqual([{ n: 9007199254740991, at: new Date("2026-11-23T10:00:00Z"), bytes: new Uint8Array([1, 2, 255]) }]);
  });

  it("keeps Postgres's error fields, and transactions commit or roll back whole", async () => {
    await sql`create table things (id int primary key)`.execute(database.db);
    await sql`insert into things values (1)`.execute(database.db);
    const error = await sql`insert into things values (1)`.execute(database.db).catch((e: unknown) => e);
    expect(isUniqueViolation(error)).toBe(true);
    expect(error).toMatchObject({ code: "23505", constraint: "things_pkey" });
    await expect(
      database.db.transaction().execute(async (trx) => {
        await sql`insert into things values (2)`.execute(trx);
        await sql`insert into things values (1)`.execute(trx);
      }),
    ).rejects.toMatchObject({ code: "23505" });
    await database.db.transaction().execute((trx) => sql`insert into things values (3)`.execute(trx));
    const { rows } = await sql<{ id: number }>`select id from things order by id`.execute(database.db);
    expect(rows.map((row) => row.id)).toEqual([1, 3]);
  });

  it("leaves the calling thread free while a statement runs", async () => {
    // In the process, PGlite runs a statement as one synchronous WebAssembly call: no timer fires
    // until it returns. On its thread, timers keep firing.
    let turns = 0;
    const ticking = setInterval(() => turns++, 1);
    await sql`select count(*) from generate_series(1, 3000000)`.execute(database.db);
    clearInterval(ticking);
    expect(turns).toBeGreaterThanOrEqual(5);
  });
});
