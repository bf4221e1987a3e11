import express, { type RequestHandler, type Router } from "express";
import { methodNotAllowed } from "./http/error-handler.js";
import type { EdgeClients } from "./server.js";
import { authenticate } from "./http/auth.js";
import { getAccount } from "./resources/account.js";
import { workspaceHandlers } from "./resources/workspaces.js";

type Method = "get" | "post" | "patch" | "delete";

/** The public routes of /api/v1: each with the scope it needs, and a 405 for every other method. */
export function registerApiRoutes(api: Router, clients: EdgeClients, maxBodyBytes: number): void {
  // Bodies are read only after the key is accepted, so anonymous callers cannot make us parse them.
  const json = express.json({ limit: maxBodyBytes, type: "application/json" });
  const route = (path: string, methods: Partial<Record<Method, [scope: string, handler: RequestHandler]>>) => {
    const entry = api.route(path);
    for (const [method, [scope, handler]] of Object.entries(methods) as [Method, [string, RequestHandler]][]) {
      const body = method === "post" || method === "patch" ? [json] : [];
      entry[method](authenticate(clients.tenancy, scope), ...body, handler);
    }
    entry.all(methodNotAllowed(Object.keys(methods)));
  };

  const workspaces = workspaceHandlers(clients.workspaces);

  route("/account", { get: ["account:read", getAccount] });
  route("/workspaces", { get: ["workspaces:read", workspaces.list], post: ["workspaces:write", workspaces.create] });
  route("/workspaces/:workspace_id", { get: ["workspaces:read", workspaces.get], patch: ["workspaces:write", workspaces.update] });
}
