import { sql, type RawBuilder } from "kysely";

/**
 * The keyset condition "comes after (createdAt, id)" for lists ordered by (created_at, id): a row
 * comparison that uses the (…, created_at, id) indexes and never skips or repeats a row between pages.
 */
export function afterKeyset(table: string, after: { createdAt: Date; id: string }): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(`${table}.created_at`)}, ${sql.ref(`${table}.id`)}) > (${after.createdAt}, ${after.id})`;
}

/** The keyset condition "comes before (createdAt, id)", for lists ordered newest first by (created_at, id) descending. */
export function beforeKeyset(table: string, before: { createdAt: Date; id: string }): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(`${table}.created_at`)}, ${sql.ref(`${table}.id`)}) < (${before.createdAt}, ${before.id})`;
}
