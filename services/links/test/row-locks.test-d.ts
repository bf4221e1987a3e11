// A function that locks rows must be handed a transaction: outside one, the lock is released at once.
import type { Kysely, Transaction } from "kysely";
import { describe, expectTypeOf, it } from "vitest";
import * as domains from "../src/domains/domains.repository.js";
import type { LinksTables } from "../src/tables.js";

describe("links' row locks", () => {
  it("take a transaction, not the database", () => {
    expectTypeOf(domains.findDomainForShare).parameter(0).toEqualTypeOf<Transaction<LinksTables>>();
    expectTypeOf(domains.findDomainForUpdate).parameter(0).toEqualTypeOf<Transaction<LinksTables>>();
    expectTypeOf<Kysely<LinksTables>>().not.toExtend<Parameters<typeof domains.findDomainForShare>[0]>();
    expectTypeOf<Kysely<LinksTables>>().not.toExtend<Parameters<typeof domains.findDomainForUpdate>[0]>();
  });
});
