import type { ConnectRouter } from "@connectrpc/connect";
import { RenderingService } from "@qrplatform/api/rendering";
import { validateDesign } from "./design/design.handlers.js";
import type { LogoFetchOptions } from "./logo/fetch-logo.js";
import type { Renderer } from "./render/renderer.js";

export function registerRoutes(router: ConnectRouter, renderer: Renderer, logoFetch: LogoFetchOptions): void {
  router.service(RenderingService, {
    validateDesign: (req) => validateDesign(req, logoFetch),
    // The context's signal is aborted when the caller cancels or its deadline passes: the render stops.
    renderQrCode: (req, context) => renderer.render(req, context.signal),
  });
}
