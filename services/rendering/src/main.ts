// The rendering service as its own process. Configuration: see the README's table.
import { z } from "zod";
import { runGrpcService } from "@qrplatform/platform";
import { buildRendering } from "./server.js";

await runGrpcService({
  service: "rendering",
  env: z.object({}),
  async start() {
    return { modules: [await buildRendering()], close: async () => {} };
  },
});
