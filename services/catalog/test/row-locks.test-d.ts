// A function that locks rows must be handed a transaction: outside one, the lock is released at once.
import type { Kysely, Transaction } from "kysely";
import { describe, expectTypeOf, it } from "vitest";
import type { CatalogTables } from "../src/tables.js";
import { recordEvent } from "../src/webhooks/webhook-events.js";
import * as workspaces from "../src/workspaces/workspaces.repository.js";

describe("catalog's row locks", () => {
  it("take a transaction, not the database", () => {
    expectTypeOf(workspaces.lockWorkspace).parameter(0).toEqualTypeOf<Transaction<CatalogTables>>();
    expectTypeOf<Kysely<CatalogTables>>().not.toExtend<Parameters<typeof workspaces.lockWorkspace>[0]>();
  });

  it("record an event only in the transaction of the change it reports", () => {
    expectTypeOf(recordEvent).parameter(0).toEqualTypeOf<Transaction<CatalogTables>>();
    expectTypeOf<Kysely<CatalogTables>>().not.toExtend<Parameters<typeof recordEvent>[0]>();
  });
});
