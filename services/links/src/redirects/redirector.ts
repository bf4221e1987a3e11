import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { RedirectService } from "@qrplatform/api/links";
import { noMetrics, secondsSince, traceHttpRequest, type Logger, type Metrics } from "@qrplatform/platform";
import { couldBeSlug } from "../links/slugs.js";
import { NOT_FOUND_PAGE, PAGE_SECURITY_POLICY, PAUSED_PAGE, UNAVAILABLE_PAGE } from "./pages.js";

/** Where a link sends its visitor. */
export interface RedirectTarget {
  linkId: string;
  accountId: string;
  /** The destination with the link's parameters merged in; empty when paused. */
  location: string;
  paused: boolean;
}

/** Finds the link a host and slug name; undefined when there is none. Throws only when it cannot tell. */
export type ResolveLink = (host: string, slug: string) => Promise<RedirectTarget | undefined>;

/** A {@link ResolveLink} that asks RedirectService.ResolveRedirect over a transport (in-process or gRPC). */
export function resolveVia(transport: Transport): ResolveLink {
  const client = createClient(RedirectService, transport);
  return async (host, slug) => {
    try {
      const { linkId, accountId, location, paused } = await client.resolveRedirect({ host, slug });
      return { linkId, accountId, location, paused };
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
      throw error;
    }
  };
}

/** What the redirector is built from. */
export interface RedirectorOptions {
  resolve: ResolveLink;
  logger: Logger;
  /** Called for every 302 after it is sent; decides itself what counts as a scan. */
  onRedirect?: (req: IncomingMessage, target: RedirectTarget) => void;
  /** Where answers are counted by outcome and timed. */
  metrics?: Metrics;
}

/** How a short-link request was answered: the `outcome` label, a fixed set. */
export type RedirectOutcome = "redirected" | "paused" | "not_found" | "unavailable" | "method_not_allowed";

/** Buckets of the redirect path: a cached answer takes well under a millisecond, a lookup a few. */
const REDIRECT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

function redirectMetrics(metrics: Metrics) {
  const answered = metrics.counter({
    name: "qrp_redirects_total",
    help: "Short-link requests by outcome: redirected, paused, not_found, unavailable (the database away and the link not cached), method_not_allowed.",
    labelNames: ["outcome"],
  });
  const duration = metrics.histogram({
    name: "qrp_redirect_duration_seconds",
    help: "Time from a short-link request to its answer, in seconds.",
    buckets: REDIRECT_BUCKETS,
  });
  return (outcome: RedirectOutcome, startedAt: number) => {
    answered.inc({ outcome });
    duration.observe(secondsSince(startedAt));
  };
}

// A Location is only ever sent if it is plain visible ASCII, whatever the resolver returned.
const SAFE_LOCATION = /^https?:\/\/[\x21-\x7e]+$/;

const send = (res: ServerResponse, status: number, body: Buffer, headers: Record<string, string> = {}) => {
  res.writeHead(status, {
    "Cache-Control": "no-store",
    "Content-Type": "text/html; charset=utf-8",
    "Content-Length": String(body.length),
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": PAGE_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    ...headers,
  });
  // For HEAD, Node sends the headers only.
  res.end(body);
};

/**
 * What the redirector answers before the links service has started (its database away at start, say):
 * it knows no link yet, so every short link gets the 503 "temporarily unavailable" page.
 */
export const redirectsUnavailable: RequestListener = (_req, res) =>
  send(res, 503, UNAVAILABLE_PAGE, { "Retry-After": "5" });

/**
 * The public redirector: `GET` or `HEAD /{slug}` on the default short domain or a custom domain.
 * Active links answer 302 to their destination; paused ones a 404 "paused" page; everything else one
 * uniform 404 page, the same bytes whatever the reason. Nothing is cacheable, so a change or a
 * deletion takes effect on the next scan.
 *
 * It is a plain request listener, so it can be served alone (`listenHttp`) or mounted as the
 * last handler of an Express app, after every route the app owns.
 */
export function buildRedirector(options: RedirectorOptions): RequestListener {
  const { resolve, logger, onRedirect } = options;
  const answered = redirectMetrics(options.metrics ?? noMetrics);

  // The access log of short links: at debug level only, since a busy link would write a line per scan.
  const logAccess = (req: IncomingMessage, res: ServerResponse, started: number) =>
    logger.debug(
      { method: req.method, url: req.url, status: res.statusCode, ms: Math.round(performance.now() - started) },
      "short link",
    );

  const redirect = (req: IncomingMessage, res: ServerResponse) => {
    const startedAt = performance.now();
    if (logger.isLevelEnabled("debug")) res.once("finish", () => logAccess(req, res, startedAt));
    if (req.method !== "GET" && req.method !== "HEAD") {
      send(res, 405, NOT_FOUND_PAGE, { Allow: "GET, HEAD" });
      answered("method_not_allowed", startedAt);
      return;
    }
    const slug = slugOf(req.url ?? "");
    const host = req.headers.host;
    if (slug === undefined || !host) {
      send(res, 404, NOT_FOUND_PAGE);
      answered("not_found", startedAt);
      return;
    }
    resolve(host, slug).then(
      (target) => {
        if (!target) {
          send(res, 404, NOT_FOUND_PAGE);
          return answered("not_found", startedAt);
        }
        if (target.paused) {
          send(res, 404, PAUSED_PAGE);
          return answered("paused", startedAt);
        }
        if (!SAFE_LOCATION.test(target.location)) {
          logger.error({ linkId: target.linkId }, "refusing to redirect to a location that is not plain ASCII");
          send(res, 404, NOT_FOUND_PAGE);
          return answered("not_found", startedAt);
        }
        // No Referrer-Policy here: the destination sees the page the scan came from, as with any link.
        res.writeHead(302, {
          Location: target.location,
          "Cache-Control": "no-store",
          "Content-Length": "0",
          "X-Content-Type-Options": "nosniff",
        });
        res.end();
        answered("redirected", startedAt);
        try {
          onRedirect?.(req, target);
        } catch (error) {
          // The visitor has their redirect; a recording fault must not turn into an unhandled rejection.
          logger.error({ err: error, linkId: target.linkId }, "could not record a scan");
        }
      },
      (error: unknown) => {
        logger.error({ err: error, host, slug }, "could not resolve a short link");
        send(res, 503, UNAVAILABLE_PAGE, { "Retry-After": "5" });
        answered("unavailable", startedAt);
      },
    );
  };
  // Sampled: only the hot-path share of redirects is traced, and none at all while tracing is off.
  return (req, res) => traceHttpRequest(req, res, { route: () => "/{slug}", hotPath: true }, () => redirect(req, res));
}

/** The slug of a single-segment path such as "/abc123" (a query string is ignored); undefined for any other path. */
function slugOf(target: string): string | undefined {
  let path: string | undefined;
  if (target.startsWith("/")) {
    path = target.split(/[?#]/, 1)[0];
  } else {
    // The absolute form a proxy may send: GET http://host/slug HTTP/1.1.
    try {
      path = new URL(target).pathname;
    } catch {
      path = undefined;
    }
  }
  const match = path === undefined ? null : /^\/([^/]+)$/.exec(path);
  return match && couldBeSlug(match[1]!) ? match[1] : undefined;
}
