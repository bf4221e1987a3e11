import type { ApiClient, Workspace } from "@qrplatform/api-client";
import { call } from "./api.ts";

/** Every workspace of the account, for the pickers (paged through 100 at a time). */
export async function allWorkspaces(api: ApiClient): Promise<Workspace[]> {
  const all: Workspace[] = [];
  let cursor: string | undefined;
  do {
    const page = await call(api.GET("/workspaces", { params: { query: { limit: 100, ...(cursor && { cursor }) } } }));
    all.push(...page.data);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return all;
}
