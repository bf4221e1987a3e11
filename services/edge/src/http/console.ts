import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import express, { type RequestHandler, type Router } from "express";
import helmet from "helmet";
import { z } from "zod";
import { optionalVar } from "@qrplatform/platform";
import { methodNotAllowed, routeNotFound } from "./error-handler.js";

const require = createRequire(import.meta.url);

/** Where the console is mounted; its client routes live below it. */
export const CONSOLE_PATH = "/console";

/**
 * The console's policy: its own scripts, styles and images only, API calls to this origin only, and
 * images of QR codes drawn from blobs the page fetched with the key. No inline script, no eval, no
 * other host: the page holds an API key, so nothing but its own code may run beside it.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; " +
  "font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * Serves the built console (`dir` holds Vite's index.html and assets/) at /console/: hashed assets
 * cached for a year as immutable, index.html never cached so a deploy reaches every browser on its
 * next load, and every other path below /console/ answered with index.html (the client's routes).
 * A missing asset is 404, never index.html: a stale page asking for an old chunk must fail loudly.
 */
export function consoleRouter(dir: string): Router {
  const indexFile = join(dir, "index.html");
  if (!existsSync(indexFile)) {
    throw new Error(`the console is enabled but not built: ${indexFile} is missing (run npm run build)`);
  }
  const index = readFileSync(indexFile);
  const notAllowed = methodNotAllowed(["get"]);
  const router = express.Router({ caseSensitive: true, strict: true });
  router.use(CONSOLE_PATH, consoleSecurityHeaders());

  router.get(CONSOLE_PATH, (_req, res) => res.redirect(301, `${CONSOLE_PATH}/`));
  router.use(
    `${CONSOLE_PATH}/assets`,
    express.static(join(dir, "assets"), {
      index: false,
      etag: true,
      setHeaders: (res) => res.setHeader("Cache-Control", "public, max-age=31536000, immutable"),
    }),
  );
  const sendIndex: RequestHandler = (_req, res) => {
    res.setHeader("Cache-Control", "no-cache");
    res.type("html").send(index);
  };
  router.get(`${CONSOLE_PATH}/`, sendIndex);
  router.get(`${CONSOLE_PATH}/*path`, (req, res, next) => {
    // A file name with an extension that is not an asset is a mistake, not a client route.
    if (/\.[a-z0-9]+$/i.test(req.path)) return next();
    sendIndex(req, res, next);
  });
  router.all(`${CONSOLE_PATH}/*path`, (req, res, next) =>
    req.method === "GET" || req.method === "HEAD" ? next() : notAllowed(req, res, next),
  );
  // Whatever is left below /console/ (a missing asset, a stray file name) is the edge's 404, never a short link.
  router.use(CONSOLE_PATH, routeNotFound);
  return router;
}

function consoleSecurityHeaders(): RequestHandler {
  const helmetHeaders = helmet({
    contentSecurityPolicy: false,
    crossOriginResourcePolicy: { policy: "same-origin" },
    referrerPolicy: { policy: "no-referrer" },
    xFrameOptions: { action: "deny" },
    strictTransportSecurity: false,
  }) as RequestHandler;
  return (req, res, next) => {
    res.setHeader("Content-Security-Policy", CONSOLE_CSP);
    helmetHeaders(req, res, next);
  };
}

/**
 * CONSOLE_ENABLED: whether the edge serves the console ("true", the default, or "false"). An edge
 * whose operators want the API alone turns it off; the API is the same either way.
 */
export const consoleEnv = z.object({
  CONSOLE_ENABLED: optionalVar(z.enum(["true", "false"])).transform((value) => value ?? "true"),
});

/** The folder of the built console in this installation: @qrplatform/console's dist/, as the build leaves it. */
export function builtConsoleDir(): string {
  return join(dirname(require.resolve("@qrplatform/console/package.json")), "dist");
}

/** The console folder the edge should serve under this configuration, or undefined when it is off. */
export function consoleDirFromEnv(config: z.infer<typeof consoleEnv>): string | undefined {
  return config.CONSOLE_ENABLED === "true" ? builtConsoleDir() : undefined;
}
