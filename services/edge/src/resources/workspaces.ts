import type { Client } from "@connectrpc/connect";
import type { RequestHandler } from "express";
import { z } from "zod";
import { textSchema } from "@qrplatform/platform";
import type { Workspace, WorkspaceService } from "@qrplatform/api/catalog";
import { callerOf } from "../http/auth.js";
import { requestKeyOf } from "../http/idempotency.js";
import { jsonBody, parseInput } from "../http/input.js";
import { listEnvelope, pageRequestOf } from "../http/pagination.js";
import { dateTime } from "./json.js";
import { uuidParam } from "./params.js";

/** The public Workspace. */
export function workspaceJson(workspace: Workspace) {
  return {
    id: workspace.id,
    account_id: workspace.accountId,
    name: workspace.name,
    slug: workspace.slug,
    description: workspace.description ?? null,
    logo_url: workspace.logoUrl ?? null,
    qr_code_count: Number(workspace.qrCodeCount),
    created_at: dateTime(workspace.createTime),
    updated_at: dateTime(workspace.updateTime),
  };
}

/** What a workspace shows but never takes. */
const WORKSPACE_READ_ONLY = {
  id: "read_only",
  account_id: "read_only",
  slug: "read_only",
  qr_code_count: "read_only",
  created_at: "read_only",
  updated_at: "read_only",
} as const;

// The edge checks shape (types, unknown and read-only fields); the catalog owns the rules (lengths, URLs).
const createBody = z.strictObject({
  name: textSchema(),
  description: textSchema("multi").nullish(),
  logo_url: textSchema().nullish(),
});

// PATCH: an absent field stays as it is; null clears the optional ones.
const updateBody = z.strictObject({
  name: textSchema().optional(),
  description: textSchema("multi").nullable().optional(),
  logo_url: textSchema().nullable().optional(),
});

/** The workspace routes' handlers, calling the catalog over whatever transport the client was built on. */
export function workspaceHandlers(workspaces: Client<typeof WorkspaceService>) {
  const list: RequestHandler = async (req, res) => {
    const page = pageRequestOf(req);
    const found = await workspaces.listWorkspaces({ accountId: callerOf(res).accountId, ...page });
    res.json(listEnvelope(found.workspaces.map(workspaceJson), found.nextPageToken));
  };

  const create: RequestHandler = async (req, res) => {
    const body = parseInput(createBody, jsonBody(req), WORKSPACE_READ_ONLY);
    const { workspace } = await workspaces.createWorkspace({
      accountId: callerOf(res).accountId,
      name: body.name,
      description: body.description ?? undefined,
      logoUrl: body.logo_url ?? undefined,
      // With the request's Idempotency-Key the catalog makes at most one workspace for it.
      idempotencyKey: requestKeyOf(res),
    });
    res.status(201).location(`${req.baseUrl}/workspaces/${workspace!.id}`).json(workspaceJson(workspace!));
  };

  const get: RequestHandler = async (req, res) => {
    const workspaceId = uuidParam(req, "workspace_id");
    const { workspace } = await workspaces.getWorkspace({ accountId: callerOf(res).accountId, workspaceId });
    res.json(workspaceJson(workspace!));
  };

  const update: RequestHandler = async (req, res) => {
    const workspaceId = uuidParam(req, "workspace_id");
    const body = parseInput(updateBody, jsonBody(req), WORKSPACE_READ_ONLY);
    const { workspace } = await workspaces.updateWorkspace({
      accountId: callerOf(res).accountId,
      workspaceId,
      name: body.name,
      description: body.description ?? undefined,
      clearDescription: body.description === null,
      logoUrl: body.logo_url ?? undefined,
      clearLogoUrl: body.logo_url === null,
    });
    res.json(workspaceJson(workspace!));
  };

  // Only an empty workspace is deleted: the catalog refuses one with codes (409 workspace_not_empty).
  const remove: RequestHandler = async (req, res) => {
    const workspaceId = uuidParam(req, "workspace_id");
    await workspaces.deleteWorkspace({ accountId: callerOf(res).accountId, workspaceId });
    res.json({ id: workspaceId, deleted: true });
  };

  return { list, create, get, update, remove };
}
