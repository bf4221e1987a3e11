import type { Kysely } from "kysely";
import type { TenancyTables } from "../tables.js";
import type { ApiKeyRow, NewApiKeyRow } from "./api-keys.table.js";

export async function insert(db: Kysely<TenancyTables>, key: NewApiKeyRow): Promise<ApiKeyRow> {
  return db.insertInto("api_keys").values(key).returningAll().executeTakeFirstOrThrow();
}

export async function findBySecretHash(
  db: Kysely<TenancyTables>,
  secretSha256: string,
): Promise<ApiKeyRow | undefined> {
  return db.selectFrom("api_keys").selectAll().where("secret_sha256", "=", secretSha256).executeTakeFirst();
}

export async function list(db: Kysely<TenancyTables>, accountId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom("api_keys")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
}

/** Sets revoked_at once; a key that is already revoked keeps its first revocation time. */
export async function revoke(db: Kysely<TenancyTables>, id: string, at: Date): Promise<ApiKeyRow | undefined> {
  await db
    .updateTable("api_keys")
    .set({ revoked_at: at })
    .where("id", "=", id)
    .where("revoked_at", "is", null)
    .execute();
  return db.selectFrom("api_keys").selectAll().where("id", "=", id).executeTakeFirst();
}
