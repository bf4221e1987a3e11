import type { ColumnType, Generated, Insertable, Selectable, Updateable } from "kysely";

/** tenancy.accounts */
export interface AccountsTable {
  id: string;
  name: string;
  slug: string;
  /** A SubscriptionTier token, such as "origin". */
  subscription_tier: string;
  /** A SubscriptionStatus token, such as "active". */
  subscription_status: string;
  /** Addon tokens, such as "premium_frames". */
  addons: ColumnType<string[], string[] | undefined, string[]>;
  hourly_request_limit_override: number | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type AccountRow = Selectable<AccountsTable>;
export type NewAccountRow = Insertable<AccountsTable>;
export type AccountChanges = Updateable<AccountsTable>;
