import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { z } from "zod";
import {
  CreateWorkspaceResponseSchema,
  DeleteWorkspaceResponseSchema,
  GetWorkspaceResponseSchema,
  ListWorkspacesResponseSchema,
  UpdateWorkspaceResponseSchema,
  type CreateWorkspaceRequest,
  type CreateWorkspaceResponse,
  type DeleteWorkspaceRequest,
  type DeleteWorkspaceResponse,
  type GetWorkspaceRequest,
  type GetWorkspaceResponse,
  type ListWorkspacesRequest,
  type ListWorkspacesResponse,
  type UpdateWorkspaceRequest,
  type UpdateWorkspaceResponse,
} from "@qrplatform/api/catalog";
import {
  Code,
  isUniqueViolation,
  isUuid,
  notFound,
  pageOf,
  readPageRequest,
  serviceError,
  slugCandidates,
  uuidSchema,
  validate,
} from "@qrplatform/platform";
import type { CatalogDeps } from "../deps.js";
import { createKeySchema, keysKeptSince, requireSameRequest } from "../idempotency/create-keys.js";
import { workspaceToProto } from "./workspace-mapping.js";
import { workspaceDescription, workspaceLogoUrl, workspaceName } from "./workspace-rules.js";
import * as workspaces from "./workspaces.repository.js";

const createWorkspaceRequest = z.object({
  accountId: uuidSchema,
  name: workspaceName,
  description: workspaceDescription.optional(),
  logoUrl: workspaceLogoUrl.optional(),
  idempotencyKey: createKeySchema.optional(),
});

/**
 * Creates a workspace. A create with an idempotency key records it on the workspace: a repeat of the key
 * returns that workspace, as it is now, however the first call's answer was lost.
 */
export async function createWorkspace(
  deps: CatalogDeps,
  req: CreateWorkspaceRequest,
): Promise<CreateWorkspaceResponse> {
  const input = validate(createWorkspaceRequest, req);
  for (const slug of slugCandidates(input.name, "workspace")) {
    try {
      const made = await workspaces.insertWorkspace(
        deps.db,
        {
          id: randomUUID(),
          account_id: input.accountId,
          name: input.name,
          slug,
          description: input.description ?? null,
          logo_url: input.logoUrl ?? null,
          idempotency_key: input.idempotencyKey?.key ?? null,
          idempotency_fingerprint: input.idempotencyKey?.fingerprint ?? null,
        },
        keysKeptSince(deps.now()),
      );
      if (made.outcome === "exists")
        requireSameRequest(made.workspace.idempotency_fingerprint, input.idempotencyKey!.fingerprint);
      return create(CreateWorkspaceResponseSchema, { workspace: workspaceToProto(made.workspace) });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }
  throw serviceError(Code.Aborted, "slug_conflict", "Could not choose a unique workspace slug; try again.");
}

export async function getWorkspace(deps: CatalogDeps, req: GetWorkspaceRequest): Promise<GetWorkspaceResponse> {
  const row =
    isUuid(req.accountId) && isUuid(req.workspaceId)
      ? await workspaces.findWorkspace(deps.db, req.accountId, req.workspaceId)
      : undefined;
  if (!row) throw notFound("workspace");
  return create(GetWorkspaceResponseSchema, { workspace: workspaceToProto(row) });
}

const listWorkspacesRequest = z.object({ accountId: uuidSchema });

export async function listWorkspaces(deps: CatalogDeps, req: ListWorkspacesRequest): Promise<ListWorkspacesResponse> {
  const { accountId } = validate(listWorkspacesRequest, req);
  const page = readPageRequest(deps.pageTokens, req, accountId, "workspaces");
  const rows = await workspaces.listWorkspaces(deps.db, accountId, { limit: page.fetch, after: page.after });
  const { items, nextPageToken } = pageOf(deps.pageTokens, rows, page.limit, accountId, "workspaces");
  return create(ListWorkspacesResponseSchema, { workspaces: items.map(workspaceToProto), nextPageToken });
}

const updateWorkspaceRequest = z.object({
  name: workspaceName.optional(),
  description: workspaceDescription.optional(),
  logoUrl: workspaceLogoUrl.optional(),
});

export async function updateWorkspace(
  deps: CatalogDeps,
  req: UpdateWorkspaceRequest,
): Promise<UpdateWorkspaceResponse> {
  const input = validate(updateWorkspaceRequest, req);
  if (!isUuid(req.accountId) || !isUuid(req.workspaceId)) throw notFound("workspace");
  const changes = {
    ...(input.name !== undefined && { name: input.name }),
    ...(input.description !== undefined && { description: input.description }),
    ...(req.clearDescription && { description: null }),
    ...(input.logoUrl !== undefined && { logo_url: input.logoUrl }),
    ...(req.clearLogoUrl && { logo_url: null }),
  };
  // An update that changes nothing leaves updated_at alone.
  // The update and the read share a transaction, whose row lock keeps a concurrent update from
  // showing its values in this answer.
  const row = await deps.db.transaction().execute(async (trx) => {
    const updated =
      Object.keys(changes).length === 0 ||
      (await workspaces.updateWorkspace(trx, req.accountId, req.workspaceId, changes));
    return updated ? workspaces.findWorkspace(trx, req.accountId, req.workspaceId) : undefined;
  });
  if (!row) throw notFound("workspace");
  return create(UpdateWorkspaceResponseSchema, { workspace: workspaceToProto(row) });
}

const deleteWorkspaceRequest = z.object({ accountId: uuidSchema, workspaceId: uuidSchema });

/**
 * Deletes a workspace only when it holds no code: a code may be printed, and deleting a workspace
 * never deletes one. The row lock makes a create or move into the workspace either finish first (and
 * be counted) or find the workspace gone.
 */
export async function deleteWorkspace(
  deps: CatalogDeps,
  req: DeleteWorkspaceRequest,
): Promise<DeleteWorkspaceResponse> {
  const { accountId, workspaceId } = validate(deleteWorkspaceRequest, req);
  await deps.db.transaction().execute(async (trx) => {
    if (!(await workspaces.lockWorkspace(trx, accountId, workspaceId, "update"))) throw notFound("workspace");
    const count = await workspaces.countAllQrCodes(trx, accountId, workspaceId);
    if (count > 0) {
      throw serviceError(
        Code.FailedPrecondition,
        "workspace_not_empty",
        `This workspace still holds ${count} QR code${count === 1 ? "" : "s"}; delete them or move them to another workspace first.`,
        { metadata: { qr_code_count: String(count) } },
      );
    }
    await workspaces.deleteWorkspace(trx, accountId, workspaceId);
  });
  return create(DeleteWorkspaceResponseSchema, { workspaceId });
}
