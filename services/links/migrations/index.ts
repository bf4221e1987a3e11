import type { Migrations } from "@qrplatform/db";

/** The links schema's migrations, oldest first. */
export const migrations: Migrations = {};

/** The Postgres schema that holds the links service's tables. */
export const SCHEMA = "links";
