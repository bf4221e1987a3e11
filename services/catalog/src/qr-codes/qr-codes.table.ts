import type { ColumnType, Generated, Selectable } from "kysely";

/** catalog.qr_codes. `design` and `utm` are JSON as the rendering and links services define them. */
export interface QrCodesTable {
  id: string;
  account_id: string;
  workspace_id: string | null;
  name: string;
  destination_url: string;
  /** A QrCodeStatus token, such as "active". */
  status: string;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  link_id: string;
  vanity_url: string;
  canonical_url: string;
  design: ColumnType<unknown, string, string>;
  utm: ColumnType<unknown, string, string>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type QrCodeRow = Selectable<QrCodesTable>;
