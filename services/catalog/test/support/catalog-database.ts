// A test database with the catalog's schema migrated, and the catalog's tables on it, for tests of the
// catalog's repositories and workers below the gRPC surface.
import type { Kysely } from "kysely";
import { afterAll, beforeAll } from "vitest";
import { migrateSchema, type Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { migrations, SCHEMA } from "../../migrations/index.js";
import type { CatalogTables } from "../../src/tables.js";

/** Opens the database before the file's tests, hands its catalog tables to `opened`, and closes it after them. */
export function useCatalogDatabase(opened: (db: Kysely<CatalogTables>) => void): void {
  let database: Database | undefined;
  beforeAll(async () => {
    database = await openTestDatabase();
    await migrateSchema(database.db, SCHEMA, migrations);
    opened(database.db.withSchema(SCHEMA) as Kysely<CatalogTables>);
  }, 60_000);
  afterAll(() => database?.close());
}
