import { RenderingService } from "@qrplatform/api/rendering";
import type { GrpcModule } from "@qrplatform/platform";
import { registerRoutes } from "./routes.js";

/** Returns the rendering service. It is stateless: no database, nothing to migrate. */
export async function buildRendering(): Promise<GrpcModule> {
  return {
    services: [RenderingService],
    routes: (router) => registerRoutes(router),
  };
}
