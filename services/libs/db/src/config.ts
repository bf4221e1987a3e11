import { z } from "zod";
import { optionalVar } from "@qrplatform/platform";

/** The environment that chooses a database: DATABASE_URL for Postgres, else PGlite under DATA_DIR. */
export const databaseEnv = z.object({
  DATABASE_URL: optionalVar(z.string().url()),
  DATA_DIR: z.string().default(".data"),
});
