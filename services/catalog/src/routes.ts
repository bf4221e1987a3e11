import type { ConnectRouter } from "@connectrpc/connect";
import { QrCodeService, WebhookEndpointService, WorkspaceService } from "@qrplatform/api/catalog";
import type { CatalogDeps } from "./deps.js";
import {
  createQrCode,
  deleteQrCode,
  getCapacity,
  getQrCode,
  listQrCodes,
  moveQrCode,
  updateQrCode,
} from "./qr-codes/qr-codes.handlers.js";
import {
  createWorkspace,
  deleteWorkspace,
  getWorkspace,
  listWorkspaces,
  updateWorkspace,
} from "./workspaces/workspaces.handlers.js";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookDeliveries,
  getWebhookDelivery,
  listWebhookEndpoints,
  rotateWebhookEndpointSecret,
  updateWebhookEndpoint,
} from "./webhooks/webhook-endpoints.handlers.js";

/** Registers the catalog's services. */
export function registerRoutes(router: ConnectRouter, deps: CatalogDeps): void {
  router.service(WorkspaceService, {
    createWorkspace: (req) => createWorkspace(deps, req),
    getWorkspace: (req) => getWorkspace(deps, req),
    listWorkspaces: (req) => listWorkspaces(deps, req),
    updateWorkspace: (req) => updateWorkspace(deps, req),
    deleteWorkspace: (req) => deleteWorkspace(deps, req),
  });
  router.service(QrCodeService, {
    createQrCode: (req) => createQrCode(deps, req),
    getQrCode: (req) => getQrCode(deps, req),
    listQrCodes: (req) => listQrCodes(deps, req),
    updateQrCode: (req) => updateQrCode(deps, req),
    moveQrCode: (req) => moveQrCode(deps, req),
    deleteQrCode: (req) => deleteQrCode(deps, req),
    getCapacity: (req) => getCapacity(deps, req),
  });
  router.service(WebhookEndpointService, {
    createWebhookEndpoint: (req) => createWebhookEndpoint(deps, req),
    getWebhookEndpoint: (req) => getWebhookEndpoint(deps, req),
    listWebhookEndpoints: (req) => listWebhookEndpoints(deps, req),
    updateWebhookEndpoint: (req) => updateWebhookEndpoint(deps, req),
    deleteWebhookEndpoint: (req) => deleteWebhookEndpoint(deps, req),
    rotateWebhookEndpointSecret: (req) => rotateWebhookEndpointSecret(deps, req),
    listWebhookDeliveries: (req) => listWebhookDeliveries(deps, req),
    getWebhookDelivery: (req) => getWebhookDelivery(deps, req),
  });
}
