import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { RedirectService } from "@qrplatform/api/links";
import { type CompiledRouting, compileRouting } from "@qrplatform/routing";
import { noMetrics, secondsSince, traceHttpRequest, type Logger, type Metrics } from "@qrplatform/platform";
import { routingOfProto } from "../links/link-routing.js";
import { couldBeSlug } from "../links/slugs.js";
import type { ScanFacts } from "../scans/recording/classify.js";
import { NOT_FOUND_PAGE, PAUSED_PAGE, sendPage, UNAVAILABLE_PAGE } from "./pages.js";

/** Where a link sends its visitor. */
export interface RedirectTarget {
  linkId: string;
  accountId: string;
  /** The destination with the link's parameters merged in; empty when paused. */
  location: string;
  paused: boolean;
  /** The link's routing, compiled once per lookup; absent or trivial for a link without any. */
  routing?: CompiledRouting;
  /** The scrypt hash of the link's password; absent or "" when it has none. */
  passwordHash?: string;
  /**
   * Set once a counted scan found every place of the scan limit taken, so that scans that take no place
   * (HEAD, bots) stop being let through too; forgotten with the answer when the link changes.
   */
  limitReached?: boolean;
}

/** Finds the link a host and slug name; undefined when there is none. Throws only when it cannot tell. */
export type ResolveLink = (host: string, slug: string) => Promise<RedirectTarget | undefined>;

/** A {@link ResolveLink} that asks RedirectService.ResolveRedirect over a transport (in-process or gRPC). */
export function resolveVia(transport: Transport): ResolveLink {
  const client = createClient(RedirectService, transport);
  return async (host, slug) => {
    try {
      const { linkId, accountId, location, paused, routing, passwordHash } = await client.resolveRedirect({
        host,
        slug,
      });
      return {
        linkId,
        accountId,
        location,
        paused,
        ...(routing !== undefined && { routing: compileRouting(routingOfProto(routing)) }),
        passwordHash,
      };
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
  /**
   * Called for every 302 after it is sent; decides itself what counts as a scan. `facts` are the
   * request's classification when routing already worked it out, so it is not worked out twice.
   */
  onRedirect?: (req: IncomingMessage, target: RedirectTarget, facts?: ScanFacts) => void;
  /**
   * Answers requests to links with routing (rules, a lifecycle, a password; see routed-redirects.ts).
   * Without it such links answer 503, never their plain destination: a password must not be skipped.
   */
  answerRouted?: AnswerRouted;
  /** Where answers are counted by outcome and timed. */
  metrics?: Metrics;
}

/** How a short-link request was answered: the `outcome` label, a fixed set. */
export type RedirectOutcome =
  | "redirected"
  | "paused"
  | "not_found"
  | "unavailable"
  | "method_not_allowed"
  | "protected"
  | "ended"
  | "too_many_guesses";

/**
 * Answers a request to a link with routing, `slug` as the request spelt it; resolves to how it was
 * answered, and rejects only when nothing was sent (the redirector then answers 503).
 */
export type AnswerRouted = (
  req: IncomingMessage,
  res: ServerResponse,
  target: RedirectTarget,
  slug: string,
) => Promise<RedirectOutcome>;

/** Buckets of the redirect path: a cached answer takes well under a millisecond, a lookup a few. */
const REDIRECT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

function redirectMetrics(metrics: Metrics) {
  const answered = metrics.counter({
    name: "qrp_redirects_total",
    help:
      "Short-link requests by outcome: redirected, paused, not_found, unavailable (the database away and the link not cached), method_not_allowed, " +
      "protected (a password form), ended (a code not live yet or ended, without a fallback URL), too_many_guesses.",
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

/** A Location is only ever sent if it is plain visible ASCII, whatever the resolver returned. */
export const SAFE_LOCATION = /^https?:\/\/[\x21-\x7e]+$/;

/**
 * What the redirector answers before the links service has started (its database away at start, say):
 * it knows no link yet, so every short link gets the 503 "temporarily unavailable" page.
 */
export const redirectsUnavailable: RequestListener = (_req, res) =>
  sendPage(res, 503, UNAVAILABLE_PAGE, { "Retry-After": "5" });

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
    // POST is a password form's answer, taken by protected codes only (answerRouted).
    if (req.method !== "GET" && req.method !== "HEAD" && req.method !== "POST") {
      sendPage(res, 405, NOT_FOUND_PAGE, { Allow: "GET, HEAD" });
      answered("method_not_allowed", startedAt);
      return;
    }
    const slug = slugOf(req.url ?? "");
    const host = req.headers.host;
    if (slug === undefined || !host) {
      sendPage(res, 404, NOT_FOUND_PAGE);
      answered("not_found", startedAt);
      return;
    }
    resolve(host, slug).then(
      (target) => {
        if (!target) {
          sendPage(res, 404, NOT_FOUND_PAGE);
          return answered("not_found", startedAt);
        }
        if (target.paused) {
          sendPage(res, 404, PAUSED_PAGE);
          return answered("paused", startedAt);
        }
        // One branch for a link without routing: it answers exactly as it did before routing existed.
        if (target.routing !== undefined && !target.routing.trivial) return routed(req, res, target, slug, startedAt);
        if (req.method === "POST") {
          sendPage(res, 405, NOT_FOUND_PAGE, { Allow: "GET, HEAD" });
          return answered("method_not_allowed", startedAt);
        }
        if (!SAFE_LOCATION.test(target.location)) {
          logger.error({ linkId: target.linkId }, "refusing to redirect to a location that is not plain ASCII");
          sendPage(res, 404, NOT_FOUND_PAGE);
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
        sendPage(res, 503, UNAVAILABLE_PAGE, { "Retry-After": "5" });
        answered("unavailable", startedAt);
      },
    );
  };
  const routed = (
    req: IncomingMessage,
    res: ServerResponse,
    target: RedirectTarget,
    slug: string,
    startedAt: number,
  ) => {
    const failed = (error: unknown) => {
      logger.error({ err: error, linkId: target.linkId }, "could not answer a link with routing");
      if (!res.headersSent) sendPage(res, 503, UNAVAILABLE_PAGE, { "Retry-After": "5" });
      else res.destroy();
      answered("unavailable", startedAt);
    };
    if (!options.answerRouted) return failed(new Error("this redirector was built without answerRouted"));
    options.answerRouted(req, res, target, slug).then((outcome) => answered(outcome, startedAt), failed);
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
