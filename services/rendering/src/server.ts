import { RenderingService } from "@qrplatform/api/rendering";
import type { GrpcModule } from "@qrplatform/platform";
import { Renderer, type RendererOptions } from "./render/renderer.js";
import { registerRoutes } from "./routes.js";

/** Returns the rendering service. It keeps no data: only a bounded cache of rendered images in memory. */
export async function buildRendering(options: RendererOptions = {}): Promise<GrpcModule & { renderer: Renderer }> {
  const renderer = new Renderer(options);
  return {
    renderer,
    services: [RenderingService],
    routes: (router) => registerRoutes(router, renderer),
  };
}
