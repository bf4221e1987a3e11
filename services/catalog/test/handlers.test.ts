// Each handler is named after its RPC, so routes.ts reads as a list of RPCs rather than a table of aliases.
import { describe, expect, it } from "vitest";
import { QrCodeService, WebhookEndpointService, WorkspaceService } from "@qrplatform/api/catalog";
import * as qrCodes from "../src/qr-codes/qr-codes.handlers.js";
import * as webhookEndpoints from "../src/webhooks/webhook-endpoints.handlers.js";
import * as workspaces from "../src/workspaces/workspaces.handlers.js";

const handlers: Record<string, unknown> = { ...qrCodes, ...webhookEndpoints, ...workspaces };

describe("catalog's handlers", () => {
  it.each([WorkspaceService, QrCodeService, WebhookEndpointService])(
    "has one named after each RPC of $typeName",
    (service) => {
      const missing = service.methods
        .map((method) => method.localName)
        .filter((name) => typeof handlers[name] !== "function");
      expect(missing).toEqual([]);
    },
  );
});
