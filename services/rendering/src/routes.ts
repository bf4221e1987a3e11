import type { ConnectRouter } from "@connectrpc/connect";
import { RenderingService } from "@qrplatform/api/rendering";

/**
 * Registers the rendering service. Rendering and design validation arrive with the export work;
 * until a method is implemented here, Connect answers it with UNIMPLEMENTED.
 */
export function registerRoutes(router: ConnectRouter): void {
  router.service(RenderingService, {});
}
