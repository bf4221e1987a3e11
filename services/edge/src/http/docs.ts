import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import express, { type Router } from "express";
import { parse } from "yaml";
import { methodNotAllowed } from "./error-handler.js";

const require = createRequire(import.meta.url);

/**
 * The OpenAPI document of the public API, the one source of truth for clients and the REST tests.
 * Found through the edge's package, so the compiled edge (dist/edge.js) finds it as the sources do.
 */
export const OPENAPI_FILE = require.resolve("@qrplatform/edge/openapi.yaml");

// swagger-ui-dist's own entry point loads its browser bundles into Node; its path helper alone does not.
const swaggerUiDir = (require("swagger-ui-dist/absolute-path.js") as () => string)();

/** The files of swagger-ui-dist the reference page loads. Nothing else of the package is served. */
const SWAGGER_UI_FILES = new Set(["swagger-ui.css", "swagger-ui-bundle.js", "favicon-16x16.png", "favicon-32x32.png"]);

function referencePage(documentUrl: string): string {
  // No inline script: init.js reads the document's URL from the data attribute, so a strict CSP fits.
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>qr-platform API reference</title>
  <link rel="icon" type="image/png" sizes="32x32" href="/docs/assets/favicon-32x32.png">
  <link rel="icon" type="image/png" sizes="16x16" href="/docs/assets/favicon-16x16.png">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <script defer src="/docs/assets/swagger-ui-bundle.js"></script>
  <script defer src="/docs/init.js"></script>
</head>
<body>
  <div id="swagger-ui" data-openapi-url="${documentUrl}"></div>
</body>
</html>
`;
}

/**
 * The API's own description, public and keyless: `GET {apiBasePath}/openapi.json` (the YAML, parsed
 * once here) and a reference page at `/docs` that works offline, Swagger UI served from
 * node_modules. Mount it before the API router so neither key checks nor the API's 404 see it.
 */
export function docsRouter(apiBasePath: string): Router {
  const documentJson = JSON.stringify(parse(readFileSync(OPENAPI_FILE, "utf8")));
  const documentUrl = `${apiBasePath}/openapi.json`;
  const page = referencePage(documentUrl);
  const router = express.Router({ caseSensitive: true });

  router
    .route(documentUrl)
    .get((_req, res) => {
      res.setHeader("Cache-Control", "public, max-age=300");
      res.type("application/json").send(documentJson);
    })
    .all(
      (_req, res, next) => {
        // Other methods answer like every API path, which is never cached.
        res.setHeader("Cache-Control", "no-store");
        next();
      },
      methodNotAllowed(["get"]),
    );

  router.get("/docs", (_req, res) => {
    res.setHeader("Cache-Control", "public, max-age=300");
    res.type("html").send(page);
  });
  router.get("/docs/init.js", (_req, res) => {
    res.setHeader("Cache-Control", "public, max-age=300");
    res.sendFile(join(dirname(OPENAPI_FILE), "reference/init.js"));
  });

  const assets = express.Router({ caseSensitive: true });
  assets.use((req, _res, next) => next(SWAGGER_UI_FILES.has(req.path.slice(1)) ? undefined : "router"));
  assets.use(express.static(swaggerUiDir, { index: false, maxAge: "1h" }));
  router.use("/docs/assets", assets);
  return router;
}
