import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { WorkspaceSchema, type Workspace } from "@qrplatform/api/catalog";
import type { WorkspaceWithCount } from "./workspaces.table.js";

export function workspaceToProto(row: WorkspaceWithCount): Workspace {
  return create(WorkspaceSchema, {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    slug: row.slug,
    description: row.description ?? undefined,
    logoUrl: row.logo_url ?? undefined,
    qrCodeCount: BigInt(row.qr_code_count),
    createTime: timestampFromDate(row.created_at),
    updateTime: timestampFromDate(row.updated_at),
  });
}
