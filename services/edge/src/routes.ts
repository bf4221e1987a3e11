import type { Request, RequestHandler, Router } from "express";
import { methodNotAllowed } from "./http/error-handler.js";
import type { EdgeClients } from "./server.js";
import { authenticate } from "./http/auth.js";
import { jsonBodyParser } from "./http/input.js";
import type { AuthenticateKey } from "./http/key-cache.js";
import type { Metrics } from "@qrplatform/platform";
import { hourlyQuota, type QuotaStore } from "./http/quota.js";
import { getAccountHandler } from "./resources/account.js";
import { analyticsHandler } from "./resources/analytics.js";
import { domainHandlers } from "./resources/domains.js";
import { exportHandler } from "./resources/export.js";
import type { ExportedImages } from "./resources/exported-images.js";
import { previewHandler } from "./resources/preview.js";
import { qrCodeHandlers, qrCodeJson } from "./resources/qr-codes.js";
import { resolveHandler } from "./resources/qr-code-resolve.js";
import { bulkCreateHandler } from "./resources/qr-codes-bulk.js";
import { webhookHandlers } from "./resources/webhooks.js";
import { workspaceHandlers } from "./resources/workspaces.js";
import { workspaceExportHandler } from "./resources/workspace-export.js";

type Method = "get" | "post" | "patch" | "delete";

/** The public routes of /api/v1: each with the scope it needs, and a 405 for every other method. */
export function registerApiRoutes(
  api: Router,
  clients: EdgeClients,
  options: {
    maxBodyBytes: number;
    apiBaseUrl: (req: Request) => string;
    /** The default short domain, without a trailing slash, for a preview's placeholder link. */
    shortLinkBaseUrl: (req: Request) => string;
    quotas: QuotaStore;
    metrics: Metrics;
    authenticateKey: AuthenticateKey;
    /** Makes a POST with an Idempotency-Key safe to retry (http/idempotency.ts). */
    idempotent: RequestHandler;
    /** Images exported before, answered again without a render call. */
    exportedImages: ExportedImages;
  },
): void {
  // Bodies are read only after the key is accepted and counted, so anonymous callers cannot make us parse them.
  const json = jsonBodyParser(options.maxBodyBytes);
  const quota = hourlyQuota(options.quotas, options.metrics);
  const route = (
    path: string,
    methods: Partial<Record<Method, [scope: string, handler: RequestHandler]>>,
    { effectFree = false } = {},
  ) => {
    const entry = api.route(path);
    for (const [method, [scope, handler]] of Object.entries(methods) as [Method, [string, RequestHandler]][]) {
      // Every POST that changes something takes an Idempotency-Key; the key is checked once the body is
      // read, which it fingerprints. A POST with no effect (a preview) is safe to repeat as it is.
      const post = effectFree ? [json] : [json, options.idempotent];
      const body = method === "post" ? post : method === "patch" ? [json] : [];
      entry[method](authenticate(options.authenticateKey, scope), quota, ...body, handler);
    }
    entry.all(methodNotAllowed(Object.keys(methods)));
  };

  const workspaces = workspaceHandlers(clients.workspaces);
  const qrCodes = qrCodeHandlers(clients.qrCodes, options.apiBaseUrl);
  const domains = domainHandlers(clients.domains);
  const webhooks = webhookHandlers(clients.webhooks);

  route("/account", { get: ["account:read", getAccountHandler(clients.qrCodes)] });
  route("/workspaces", { get: ["workspaces:read", workspaces.list], post: ["workspaces:write", workspaces.create] });
  route("/workspaces/:workspace_id", {
    get: ["workspaces:read", workspaces.get],
    patch: ["workspaces:write", workspaces.update],
    delete: ["workspaces:write", workspaces.remove],
  });
  route("/workspaces/:workspace_id/qr-codes", {
    get: ["qr_codes:read", qrCodes.listInWorkspace],
    post: ["qr_codes:write", qrCodes.create],
  });
  route("/workspaces/:workspace_id/qr-codes/bulk", {
    post: [
      "qr_codes:write",
      bulkCreateHandler(clients.workspaces, qrCodes.createOne, (req, qrCode) =>
        qrCodeJson(qrCode, options.apiBaseUrl(req)),
      ),
    ],
  });
  route("/workspaces/:workspace_id/qr-codes/export", {
    get: ["export:read", workspaceExportHandler(clients.workspaces, clients.qrCodes, clients.rendering)],
  });
  route("/qr-codes", { get: ["qr_codes:read", qrCodes.listAll] });
  // Before /qr-codes/:id, which would otherwise take "preview" for an id and answer 405.
  route(
    "/qr-codes/preview",
    { post: ["qr_codes:write", previewHandler(clients.rendering, options.shortLinkBaseUrl)] },
    { effectFree: true },
  );
  route("/qr-codes/:id", {
    get: ["qr_codes:read", qrCodes.get],
    patch: ["qr_codes:write", qrCodes.update],
    delete: ["qr_codes:write", qrCodes.remove],
  });
  route("/qr-codes/:id/resolve", { get: ["qr_codes:read", resolveHandler(clients.qrCodes, clients.links)] });
  route("/qr-codes/:id/analytics", { get: ["analytics:read", analyticsHandler(clients.qrCodes, clients.analytics)] });
  route("/qr-codes/:id/export", {
    get: ["export:read", exportHandler(clients.qrCodes, clients.rendering, options.exportedImages)],
  });
  route("/domains", { get: ["domains:read", domains.list] });
  route("/webhooks", { get: ["webhooks:read", webhooks.list], post: ["webhooks:write", webhooks.create] });
  route("/webhooks/:id", {
    get: ["webhooks:read", webhooks.get],
    patch: ["webhooks:write", webhooks.update],
    delete: ["webhooks:write", webhooks.remove],
  });
  route("/webhooks/:id/rotate-secret", { post: ["webhooks:write", webhooks.rotateSecret] });
  route("/webhooks/:id/deliveries", { get: ["webhooks:read", webhooks.listDeliveries] });
  route("/webhooks/:id/deliveries/:delivery_id", { get: ["webhooks:read", webhooks.getDelivery] });
}
