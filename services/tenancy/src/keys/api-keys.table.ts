import type { ColumnType, Generated, Insertable, Selectable } from "kysely";

/** tenancy.api_keys. The secret itself is never stored, only its SHA-256. */
export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  secret_sha256: string;
  display_prefix: string;
  scopes: ColumnType<string[], string[], string[]>;
  created_at: Generated<Date>;
  expires_at: Date | null;
  revoked_at: Date | null;
}

export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKeyRow = Insertable<ApiKeysTable>;
