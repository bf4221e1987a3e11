import type { Generated, Insertable, Selectable, Updateable } from "kysely";

/** catalog.workspaces */
export interface WorkspacesTable {
  id: string;
  account_id: string;
  name: string;
  slug: string;
  description: string | null;
  logo_url: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type WorkspaceRow = Selectable<WorkspacesTable>;
export type NewWorkspaceRow = Insertable<WorkspacesTable>;
export type WorkspaceChanges = Updateable<WorkspacesTable>;

/** A workspace with its live QR-code count. */
export type WorkspaceWithCount = WorkspaceRow & { qr_code_count: number };
