// @qrplatform/db: opening Postgres or embedded PGlite through kysely, and per-service migrations.
export * from "./database.js";
export * from "./migrate.js";
export * from "./config.js";
export * from "./keyset.js";
export * from "./unavailable.js";
export * from "./pool-metrics.js";
