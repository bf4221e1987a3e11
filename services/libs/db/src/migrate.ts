import { Migrator, type Migration } from "kysely/migration";
import type { SharedKysely } from "./database.js";

/** A service's migrations by name; names sort in the order they must run (we use a timestamp prefix). */
export type Migrations = Record<string, Migration>;

/**
 * Brings one service's schema up to date. Kysely's migrator holds a Postgres advisory lock while it
 * runs, so two instances starting at once apply each migration exactly once; running it again when
 * everything is applied does nothing.
 */
export async function migrateSchema(db: SharedKysely, schema: string, migrations: Migrations): Promise<string[]> {
  await db.schema
    .createSchema(schema)
    .ifNotExists()
    .execute()
    .catch(async (error: unknown) => {
      // Two instances may race to create the schema; losing that race is fine.
      const exists = await db
        .selectFrom("information_schema.schemata")
        .select("schema_name")
        .where("schema_name", "=", schema)
        .executeTakeFirst();
      if (!exists) throw error;
    });
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: schema,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw new Error(`Migrating schema "${schema}" failed`, { cause: error });
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
