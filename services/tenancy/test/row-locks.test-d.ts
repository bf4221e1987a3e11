// A function that locks rows must be handed a transaction: outside one, the lock is released at once.
import type { Kysely, Transaction } from "kysely";
import { describe, expectTypeOf, it } from "vitest";
import * as accounts from "../src/accounts/accounts.repository.js";
import type { TenancyTables } from "../src/tables.js";

describe("tenancy's row locks", () => {
  it("take a transaction, not the database", () => {
    expectTypeOf(accounts.findForUpdate).parameter(0).toEqualTypeOf<Transaction<TenancyTables>>();
    expectTypeOf<Kysely<TenancyTables>>().not.toExtend<Parameters<typeof accounts.findForUpdate>[0]>();
  });
});
