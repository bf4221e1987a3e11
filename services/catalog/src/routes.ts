import type { ConnectRouter } from "@connectrpc/connect";
import { QrCodeService, WorkspaceService } from "@qrplatform/api/catalog";
import type { CatalogDeps } from "./deps.js";
import {
  createWorkspace,
  getWorkspace,
  listWorkspacesPage,
  updateWorkspaceFields,
} from "./workspaces/workspaces.handlers.js";

/** Registers the catalog's services. QR-code methods not implemented here answer UNIMPLEMENTED. */
export function registerRoutes(router: ConnectRouter, deps: CatalogDeps): void {
  router.service(WorkspaceService, {
    createWorkspace: (req) => createWorkspace(deps, req),
    getWorkspace: (req) => getWorkspace(deps, req),
    listWorkspaces: (req) => listWorkspacesPage(deps, req),
    updateWorkspace: (req) => updateWorkspaceFields(deps, req),
  });
  router.service(QrCodeService, {});
}
