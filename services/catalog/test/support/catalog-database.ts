// A test database with the catalog's schema migrated, and the catalog's tables on it, for tests of the
// catalog's repositories and workers below the gRPC surface.
import type { Kysely } from "kysely";
import { migrateSchema, type Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { migrations, SCHEMA } from "../../migrations/index.js";
import type { CatalogTables } from "../../src/tables.js";

export async function openCatalogDatabase(): Promise<{ database: Database; db: Kysely<CatalogTables> }> {
  const database = await openTestDatabase();
  await migrateSchema(database.db, SCHEMA, migrations);
  return { database, db: database.db.withSchema(SCHEMA) as Kysely<CatalogTables> };
}
