import cors from "cors";
import type { RequestHandler } from "express";
import helmet from "helmet";

/**
 * CORS for a public API authenticated by bearer keys: any origin may call it, because a browser never
 * attaches the key on its own (no cookies, no ambient credentials), so another site cannot act for a
 * user the way CSRF does. Preflights need no key, and errors carry the same headers so a browser can
 * read the envelope. Keys are secrets all the same: a page that holds one shows it to its visitors.
 */
export function apiCors(): RequestHandler {
  return cors({
    origin: "*",
    credentials: false,
    methods: ["GET", "HEAD", "POST", "PATCH", "DELETE"],
    allowedHeaders: ["Authorization", "Content-Type", "If-None-Match", "X-Request-ID", "Idempotency-Key"],
    exposedHeaders: [
      "X-Request-ID",
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
      "Retry-After",
      "Location",
      "ETag",
      "Content-Disposition",
      "Allow",
      "Idempotent-Replayed",
    ],
    maxAge: 600,
    // The route still answers OPTIONS itself, with its Allow header.
    preflightContinue: true,
  });
}

/**
 * Headers that keep API responses inert in a browser: nothing in them may run, load, be framed or be
 * sniffed as another type, and no Referer leaks. HSTS is left to the TLS terminator, which knows the scheme.
 */
export function apiSecurityHeaders(): RequestHandler {
  return helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    crossOriginResourcePolicy: { policy: "same-origin" },
    referrerPolicy: { policy: "no-referrer" },
    xFrameOptions: { action: "deny" },
    strictTransportSecurity: false,
  }) as RequestHandler;
}
