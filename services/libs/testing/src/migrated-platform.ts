// The state most in-memory test databases begin in: every service's schema migrated, in the order the
// services start. Kept as a PGlite archive named by the migrations' content (see DatabaseTemplate), so a
// test's services find nothing to migrate; tests of migrations themselves open an empty database.
import { migrateSchema } from "@qrplatform/db";
import type { DatabaseTemplate } from "@qrplatform/db/testing";
import * as catalogSchema from "@qrplatform/catalog/migrations";
import * as linksSchema from "@qrplatform/links/migrations";
import * as tenancySchema from "@qrplatform/tenancy/migrations";

export const MIGRATED_PLATFORM: DatabaseTemplate = {
  name: "platform",
  // The migrations, and the code that applies them and records them applied.
  sources: [
    "services/libs/db/src/migrate.ts",
    "services/tenancy/migrations",
    "services/links/migrations",
    "services/catalog/migrations",
  ],
  async prepare(db) {
    for (const { SCHEMA, migrations } of [tenancySchema, linksSchema, catalogSchema])
      await migrateSchema(db, SCHEMA, migrations);
  },
};
