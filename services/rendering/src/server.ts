import { RenderingService } from "@qrplatform/api/rendering";
import type { GrpcModule } from "@qrplatform/platform";
import type { LogoFetchOptions } from "./logo/fetch-logo.js";
import { Renderer, type RendererOptions } from "./render/renderer.js";

export type { Renderer } from "./render/renderer.js";
import { registerRoutes } from "./routes.js";

export interface RenderingOptions extends RendererOptions {
  /** How logo URLs are fetched; tests use it to let a loopback server pass for a public one. */
  readonly logoFetch?: LogoFetchOptions;
}

/** Returns the rendering service. It keeps no data: only a bounded cache of rendered images in memory. */
export async function buildRendering(options: RenderingOptions = {}): Promise<GrpcModule & { renderer: Renderer }> {
  const renderer = new Renderer(options);
  return {
    renderer,
    services: [RenderingService],
    routes: (router) => registerRoutes(router, renderer, options.logoFetch ?? {}),
  };
}
