import type { ColumnType, Generated, Insertable, Selectable, Updateable } from "kysely";

/** catalog.workspaces */
export interface WorkspacesTable {
  id: string;
  account_id: string;
  name: string;
  slug: string;
  description: string | null;
  logo_url: string | null;
  /** The client's Idempotency-Key of the create that made it (per account, unique), if it sent one. */
  idempotency_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** SHA-256 of the request that key was first used for. */
  idempotency_fingerprint: ColumnType<Buffer | null, Uint8Array | null | undefined, Uint8Array | null>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type WorkspaceRow = Selectable<WorkspacesTable>;
export type NewWorkspaceRow = Insertable<WorkspacesTable>;
export type WorkspaceChanges = Updateable<WorkspacesTable>;

/** A workspace with its live QR-code count. */
export type WorkspaceWithCount = WorkspaceRow & { qr_code_count: number };
