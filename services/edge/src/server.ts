import type { RequestListener } from "node:http";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import express from "express";
import { pinoHttp } from "pino-http";
import type { Logger } from "pino";
import { noMetrics, traceHttpRequest, type AccessChangeBus, type Metrics } from "@qrplatform/platform";
import { QrCodeService, WebhookEndpointService, WorkspaceService } from "@qrplatform/api/catalog";
import { AnalyticsService, DomainService, LinkService } from "@qrplatform/api/links";
import { RenderingService } from "@qrplatform/api/rendering";
import { IdempotencyKeyService, TenancyService } from "@qrplatform/api/tenancy";
import { apiCors, apiSecurityHeaders } from "./http/browser-policy.js";
import { consoleRouter } from "./http/console.js";
import { docsRouter } from "./http/docs.js";
import { errorHandler, routeNotFound } from "./http/error-handler.js";
import { registerHealthRoutes } from "./http/health.js";
import { idempotentRequests, type IdempotencyOptions } from "./http/idempotency.js";
import { tenancyIdempotencyStore } from "./http/idempotency-store.js";
import { cachedKeys, type AuthenticateKey } from "./http/key-cache.js";
import { memoryQuotaStore, type QuotaStore } from "./http/quota.js";
import { requestIdOf } from "./http/request-id.js";
import { rememberRouteMount, requestMetrics, routeTemplateOf, UNMATCHED_ROUTE } from "./http/request-metrics.js";
import { exportedImages } from "./resources/exported-images.js";
import { registerApiRoutes } from "./routes.js";

export { CONSOLE_PATH, consoleDirFromEnv, consoleEnv } from "./http/console.js";

/** How the edge reaches the services: remote gRPC or in-process, the routes do not care. */
export interface EdgeTransports {
  tenancy: Transport;
  catalog: Transport;
  links: Transport;
  rendering: Transport;
}

/** The service clients the routes call. */
export interface EdgeClients {
  tenancy: Client<typeof TenancyService>;
  workspaces: Client<typeof WorkspaceService>;
  qrCodes: Client<typeof QrCodeService>;
  domains: Client<typeof DomainService>;
  analytics: Client<typeof AnalyticsService>;
  /** For the resolve preview, which the links service answers for a code's link. */
  links: Client<typeof LinkService>;
  rendering: Client<typeof RenderingService>;
  webhooks: Client<typeof WebhookEndpointService>;
}

/** What the edge is built from. */
export interface EdgeOptions {
  transports: EdgeTransports;
  logger: Logger;
  /** The largest JSON body accepted, in bytes; larger ones get 413. */
  maxBodyBytes?: number;
  /**
   * The public origin of the API, such as "https://api.example.com", for the absolute URLs it hands out
   * (`qr_image_url`). Unset: taken from each request's Host.
   */
  publicBaseUrl?: string | undefined;
  /**
   * The default short domain links are made on, such as "https://qr.example", where a design preview's
   * placeholder link points so it draws the grid of a real code. Unset: the API's own origin
   * (`publicBaseUrl` or the request's Host), which is the short domain when one process serves both.
   */
  shortLinkBaseUrl?: string | undefined;
  /**
   * Serves every request outside the API, docs and health routes; the embedded platform's short-link
   * redirector goes here. Without it, such requests get the 404 envelope.
   */
  fallback?: RequestListener;
  /** Where hourly request counts live; in this process's memory by default. */
  quotas?: QuotaStore;
  /** True once shutdown has begun, so /readyz turns 503 before connections drain. */
  isDraining?: () => boolean;
  /** Where requests by route and quota decisions are reported. */
  metrics?: Metrics;
  /** How Idempotency-Keys behave; they are kept by tenancy either way. */
  idempotency?: IdempotencyOptions;
  /**
   * Where tenancy announces revoked keys and changed accounts. With it the edge keeps authenticated
   * keys in memory until a change is announced (see http/key-cache.ts); without it every request asks
   * tenancy, which is right for an edge in another process than tenancy with no Redis between them.
   */
  accessChanges?: AccessChangeBus;
  /** Bytes of exported images kept to answer the same export again without rendering (default 32 MiB; 0 keeps none). */
  exportCacheBytes?: number;
  /**
   * The built console (a folder with index.html and assets/, see `consoleDist` of @qrplatform/console),
   * served at /console/; without it /console/ is the 404 envelope like any unknown path.
   */
  consoleDir?: string | undefined;
}

/** Room for a QR code with an inline logo; anything bigger is a mistake or an attack. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Bytes of exported images an edge keeps unless told otherwise (EXPORT_CACHE_BYTES). */
export const DEFAULT_EXPORT_CACHE_BYTES = 32 * 1024 * 1024;

/** How long an exported image is answered again without rendering: a new renderer's drawing reaches every export within it. */
export const EXPORT_CACHE_TTL_MS = 10 * 60_000;

/** The public API base path. */
export const API_BASE_PATH = "/api/v1";

/** Builds the REST edge as an Express app; the caller decides where it listens. */
export function buildEdge(options: EdgeOptions): express.Express {
  const { transports, logger } = options;
  const clients: EdgeClients = {
    tenancy: createClient(TenancyService, transports.tenancy),
    workspaces: createClient(WorkspaceService, transports.catalog),
    qrCodes: createClient(QrCodeService, transports.catalog),
    domains: createClient(DomainService, transports.links),
    analytics: createClient(AnalyticsService, transports.links),
    links: createClient(LinkService, transports.links),
    rendering: createClient(RenderingService, transports.rendering),
    webhooks: createClient(WebhookEndpointService, transports.catalog),
  };
  const askTenancy: AuthenticateKey = (secret) => clients.tenancy.authenticateApiKey({ secret });
  const authenticateKey = options.accessChanges
    ? cachedKeys(askTenancy, options.accessChanges).authenticate
    : askTenancy;
  const apiBaseUrl = (req: express.Request) =>
    `${options.publicBaseUrl ?? `${req.protocol}://${req.get("host")}`}${API_BASE_PATH}`;
  const shortLinkBaseUrl = (req: express.Request) =>
    options.shortLinkBaseUrl ?? options.publicBaseUrl ?? `${req.protocol}://${req.get("host")}`;

  const metrics = options.metrics ?? noMetrics;
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  // API requests are traced from here down; short links trace themselves, sampled, in the redirector.
  app.use((req, res, next) =>
    isApiPath(req.path) ? traceHttpRequest(req, res, { route: () => matchedRoute(req, res) }, next) : next(),
  );
  app.use(requestMetrics(metrics));
  app.use(
    pinoHttp({
      logger,
      genReqId: (req, res) => requestIdOf(req, res),
      customProps: (_req, res) => ({ accountId: (res as express.Response).locals?.caller?.accountId }),
      // One line per API request; short links (the embedded platform's fallback) are the redirector's
      // to log, at debug level, or a busy link would write a line per scan.
      customLogLevel: (_req, res, error) =>
        (res as express.Response).locals?.shortLink ? "silent" : error || res.statusCode >= 500 ? "error" : "info",
    }),
  );

  const health = express.Router();
  registerHealthRoutes(
    health,
    {
      tenancy: transports.tenancy,
      catalog: transports.catalog,
      links: transports.links,
      rendering: transports.rendering,
    },
    options.isDraining ?? (() => false),
  );
  app.use(health);

  // Everything under the API path, the document and every 404 included, is readable cross-origin and inert.
  app.use(API_BASE_PATH, apiCors(), apiSecurityHeaders());
  // The OpenAPI document and the reference page are public: mounted before the API's key checks and 404.
  app.use(docsRouter(API_BASE_PATH));
  if (options.consoleDir) app.use(consoleRouter(options.consoleDir));

  const api = express.Router({ caseSensitive: true, strict: false });
  api.use(rememberRouteMount());
  api.use((_req, res, next) => {
    // Responses carry the caller's data: never store them in shared caches.
    res.setHeader("Cache-Control", "no-store");
    next();
  });
  registerApiRoutes(api, clients, {
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    apiBaseUrl,
    shortLinkBaseUrl,
    quotas: options.quotas ?? memoryQuotaStore(),
    metrics,
    idempotent: idempotentRequests(
      tenancyIdempotencyStore(createClient(IdempotencyKeyService, transports.tenancy)),
      logger,
      options.idempotency,
    ),
    authenticateKey,
    exportedImages: exportedImages({
      maxBytes: options.exportCacheBytes ?? DEFAULT_EXPORT_CACHE_BYTES,
      ttlMs: EXPORT_CACHE_TTL_MS,
    }),
  });
  app.use(API_BASE_PATH, api);
  app.use(API_BASE_PATH, routeNotFound);
  const fallback = options.fallback;
  if (fallback) {
    app.use((req, res) => {
      // Short links log at debug level and count in the redirector's own metrics (qrp_redirects_total),
      // not as API requests.
      res.locals.shortLink = true;
      fallback(req, res);
    });
  }

  app.use(routeNotFound);
  app.use(errorHandler(logger));
  return app;
}

/** The first path segments the edge answers itself (compared in lower case: some of its routes ignore case). */
const EDGE_SEGMENTS: ReadonlySet<string> = new Set(["api", "console", "docs", "healthz", "readyz"]);

/**
 * Whether the edge may answer a request for this URL itself (the API, its document and reference
 * page, the health checks) rather than hand it to its fallback. A process that serves short links
 * beside the edge sends every other request straight to its redirector: a scan then skips Express,
 * the access log's per-request child logger and the request metrics, none of which it uses (see
 * `fallback`). Errs towards the edge, which still falls back for a path it does not own.
 */
export function isEdgeUrl(url: string): boolean {
  // Absolute-form and other odd request targets are left to Express, which knows how to read them.
  if (!url.startsWith("/")) return true;
  const cut = url.slice(1).search(/[/?#;]/);
  const segment = cut < 0 ? url.slice(1) : url.slice(1, cut + 1);
  return EDGE_SEGMENTS.has(segment.toLowerCase());
}

/** Whether a path is the API's (the base path itself or below it), not a short link, health check or the docs. */
function isApiPath(path: string): boolean {
  return path === API_BASE_PATH || path.startsWith(`${API_BASE_PATH}/`);
}

/** The route template that answered, such as "/api/v1/workspaces/:workspaceId"; undefined when none matched. */
function matchedRoute(req: express.Request, res: express.Response): string | undefined {
  const route = routeTemplateOf(req, res);
  return route === UNMATCHED_ROUTE ? undefined : route;
}
