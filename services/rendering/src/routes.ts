import type { ConnectRouter } from "@connectrpc/connect";
import { RenderingService } from "@qrplatform/api/rendering";
import { validateDesign } from "./design/design.handlers.js";

/**
 * Registers the rendering service. RenderQrCode arrives with the export work; until it is implemented
 * here, Connect answers it with UNIMPLEMENTED.
 */
export function registerRoutes(router: ConnectRouter): void {
  router.service(RenderingService, {
    validateDesign: (req) => validateDesign(req),
  });
}
