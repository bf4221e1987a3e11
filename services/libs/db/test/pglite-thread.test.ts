// The embedded database on a thread of its own: the same answers, errors and transactions as PGlite
// in the process, a request thread that keeps turning while a long statement runs, and sessions of
// other threads that never land inside the owner's transaction.
import { Worker } from "node:worker_threads";
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
      select 9007199254740991::int8 as n, '2026-11-23T10:00:00Z'::timestamptz as at, '\\x0102ff'::bytea as bytes`.execute(
      database.db,
    );
    expect(rows).toEqual([
      { n: 9007199254740991, at: new Date("2026-11-23T10:00:00Z"), bytes: new Uint8Array([1, 2, 255]) },
    ]);
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

  describe("sessions of other threads", () => {
    const rowsOf = async (db: Database["db"], table: string) =>
      (await sql<{ id: number }>`select id from ${sql.table(table)} order by id`.execute(db)).rows.map((row) => row.id);

    it("reach the same database, and a statement sent during another session's transaction waits for it to end", async () => {
      await sql`create table fenced (id int primary key)`.execute(database.db);
      const session = await openDatabase({ dataDir: "", ...database.connectionForThread!() });
      const order: string[] = [];
      let sessionInsert: Promise<unknown> | undefined;
      await expect(
        database.db.transaction().execute(async (trx) => {
          await sql`insert into fenced values (1)`.execute(trx);
          // Sent while the transaction is open: run inside it, it would be rolled back with it.
          sessionInsert = sql`insert into fenced values (2)`
            .execute(session.db)
            .then(() => order.push("session's insert"));
          await new Promise((resolve) => setTimeout(resolve, 50));
          await sql`insert into fenced values (3)`.execute(trx);
          order.push("transaction's last statement");
          throw new Error("roll back");
        }),
      ).rejects.toThrow("roll back");
      await sessionInsert;
      expect(order).toEqual(["transaction's last statement", "session's insert"]);
      expect(await rowsOf(database.db, "fenced")).toEqual([2]);
      expect(await rowsOf(session.db, "fenced")).toEqual([2]);
      await session.close();
      // The owner's database is still open.
      expect(await rowsOf(database.db, "fenced")).toEqual([2]);
    });

    it("roll back the open transaction of a session whose thread ended, and the others go on", async () => {
      await sql`create table abandoned (id int primary key)`.execute(database.db);
      const { pglitePort } = database.connectionForThread!();
      // A thread that opens a transaction on its session, writes, and ends without committing.
      const worker = new Worker(
        `const { workerData } = require("node:worker_threads");
        const port = workerData.port;
        port.on("message", (reply) => {
          if (reply.id === 2) process.exit(0);
        });
        port.postMessage({ kind: "query", id: 1, sql: "begin", params: [] });
        port.postMessage({ kind: "query", id: 2, sql: "insert into abandoned values (1)", params: [] });`,
        { eval: true, workerData: { port: pglitePort }, transferList: [pglitePort!] },
      );
      await new Promise((resolve) => worker.once("exit", resolve));
      await sql`insert into abandoned values (2)`.execute(database.db);
      expect(await rowsOf(database.db, "abandoned")).toEqual([2]);
    });
  });
});
