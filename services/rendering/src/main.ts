// The rendering service as its own process. Configuration: see docs/configuration.md.
import { z } from "zod";
import { optionalVar, runGrpcService } from "@qrplatform/platform";
import { buildRendering } from "./server.js";

await runGrpcService({
  service: "rendering",
  env: z.object({
    RENDER_CACHE_BYTES: optionalVar(z.coerce.number().int().min(1)),
    RENDER_CONCURRENCY: optionalVar(z.coerce.number().int().min(1)),
    RENDER_CONCURRENCY_PER_ACCOUNT: optionalVar(z.coerce.number().int().min(1)),
    RENDER_QUEUE_PER_ACCOUNT: optionalVar(z.coerce.number().int().min(0)),
  }),
  async start(config, _logger, metrics) {
    const rendering = await buildRendering({
      cacheBytes: config.RENDER_CACHE_BYTES,
      concurrency: config.RENDER_CONCURRENCY,
      concurrencyPerAccount: config.RENDER_CONCURRENCY_PER_ACCOUNT,
      queuedPerAccount: config.RENDER_QUEUE_PER_ACCOUNT,
      metrics,
    });
    return { modules: [rendering], close: () => rendering.renderer.close() };
  },
});
