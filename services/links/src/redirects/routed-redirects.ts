import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "@qrplatform/platform";
import {
  type Decision,
  decide,
  deviceOf,
  endedDecision,
  languageOf,
  MAX_PASSWORD_LENGTH,
  osOf,
  verifyPassword,
  type Visitor,
} from "@qrplatform/routing";
import { type ClassifiedRequest, type ScanFacts, visitorKey } from "../scans/recording/classify.js";
import type { ScanRoute } from "../scans/recording/scan-recorder.js";
import {
  ENDED_PAGE,
  NOT_FOUND_PAGE,
  NOT_LIVE_YET_PAGE,
  PASSWORD_PAGE,
  sendPage,
  TOO_MANY_GUESSES_PAGE,
  WRONG_PASSWORD_PAGE,
} from "./pages.js";
import type { PasswordGuesses } from "./password-guesses.js";
import { type AnswerRouted, type RedirectOutcome, type RedirectTarget, SAFE_LOCATION } from "./redirector.js";
import type { UnlockCookies } from "./unlock-cookie.js";

// The redirect path of a link with routing (issue 35, ADR 0018): the request is classified once (the
// country, device and OS its rules read, and whether it is a bot), the one pure decide() picks where
// it goes, a counted scan takes a place under the scan limit before it is let through, and the scan
// is recorded with the classification already made. Protected codes answer their password form, and
// take its POST.

/** What the routed path is built from. */
export interface RoutedRedirectsOptions {
  /** The scan classifier, opened on first use: links without routing never load the country database. */
  classifier: () => Promise<(req: ClassifiedRequest) => ScanFacts>;
  /** Salts visitor keys, which split rules hash; the same key the visitor's scans are counted under. */
  visitorKeySecret: string;
  /** Takes one place under a link's scan limit for a counted scan; false when every place is taken. */
  reserveScan: (linkId: string, maxScans: number) => Promise<boolean>;
  cookies: UnlockCookies;
  guesses: PasswordGuesses;
  /**
   * Records a redirect as a scan (unless it is none), with the classification made here and the rule
   * (and variant) that decided it, when one did.
   */
  onRedirect?: (req: IncomingMessage, target: RedirectTarget, facts: ScanFacts, route?: ScanRoute) => void;
  logger: Logger;
  /** Unix milliseconds; tests replace it. */
  now?: () => number;
}

/** The rule (and variant) that decided a scan, as analytics count it; undefined when none did. */
function routeOf(decision: Decision): ScanRoute | undefined {
  if (decision.rule_id === null) return undefined;
  return decision.variant === null
    ? { ruleId: decision.rule_id }
    : { ruleId: decision.rule_id, variant: decision.variant };
}

/** The longest password form body read: a 128-character password percent-encoded, and then some. */
const MAX_FORM_BYTES = 4096;

/**
 * The visitor facts rules read, from the request's classification; the key is worked out only when a
 * split rule asks. A class, so that every visitor has one shape and the code reading it stays optimised.
 */
class RequestVisitor implements Visitor {
  readonly country: string;
  readonly device: Visitor["device"];
  readonly os: Visitor["os"];
  readonly language: string;
  #key: string | undefined;

  constructor(
    req: IncomingMessage,
    private readonly facts: ScanFacts,
    private readonly secret: string,
    private readonly linkId: string,
  ) {
    this.country = facts.country;
    this.device = deviceOf(facts.deviceType);
    this.os = osOf(facts.os);
    this.language = languageOf(req.headers["accept-language"]);
  }

  get key(): string {
    this.#key ??= visitorKey(this.secret, this.linkId, this.facts);
    return this.#key;
  }
}

/** The body of a form post as text, or undefined when it is longer than `limit` bytes (the rest is read and dropped). */
function readForm(req: IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on("end", () => resolve(size <= limit ? Buffer.concat(chunks).toString("utf8") : undefined));
    req.on("error", reject);
  });
}

/** A browser that reached us over TLS, directly or through a proxy that says so. */
const overTls = (req: IncomingMessage) =>
  (req.socket as { encrypted?: boolean }).encrypted === true || req.headers["x-forwarded-proto"] === "https";

export function routedRedirects(options: RoutedRedirectsOptions): AnswerRouted {
  const { cookies, guesses, logger } = options;
  const now = options.now ?? Date.now;

  const redirect = (
    req: IncomingMessage,
    res: ServerResponse,
    target: RedirectTarget,
    facts: ScanFacts,
    location: string,
    route?: ScanRoute,
  ): RedirectOutcome => {
    if (!SAFE_LOCATION.test(location)) {
      logger.error({ linkId: target.linkId }, "refusing to redirect to a location that is not plain ASCII");
      sendPage(res, 404, NOT_FOUND_PAGE);
      return "not_found";
    }
    res.writeHead(302, {
      Location: location,
      "Cache-Control": "no-store",
      "Content-Length": "0",
      "X-Content-Type-Options": "nosniff",
    });
    res.end();
    try {
      options.onRedirect?.(req, target, facts, route);
    } catch (error) {
      logger.error({ err: error, linkId: target.linkId }, "could not record a scan");
    }
    return "redirected";
  };

  // Not live: the fallback URL when there is one (a scan like any other), else a page saying so.
  const ended = (
    req: IncomingMessage,
    res: ServerResponse,
    target: RedirectTarget,
    facts: ScanFacts,
    decision: Decision,
  ): RedirectOutcome => {
    if (decision.destination_url !== null) return redirect(req, res, target, facts, decision.destination_url);
    if (decision.outcome === "scheduled") sendPage(res, 404, NOT_LIVE_YET_PAGE);
    else sendPage(res, 410, ENDED_PAGE);
    return "ended";
  };

  const tooManyGuesses = (res: ServerResponse, waitSeconds: number): RedirectOutcome => {
    sendPage(res, 429, TOO_MANY_GUESSES_PAGE, { "Retry-After": String(waitSeconds) });
    return "too_many_guesses";
  };

  // The form's answer: a right password is remembered in the unlock cookie and the browser is sent back
  // to the link itself (303), whose GET then decides and counts the scan as any other; a form may only
  // lead back to its own origin under the pages' policy, so the destination is never the POST's answer.
  const answerPassword = async (
    req: IncomingMessage,
    res: ServerResponse,
    target: RedirectTarget,
    slug: string,
    facts: ScanFacts,
  ): Promise<RedirectOutcome> => {
    const key = `${target.linkId}:${facts.clientAddress}`;
    const wait = await guesses.waitFor(key);
    if (wait > 0) {
      req.resume();
      return tooManyGuesses(res, wait);
    }
    const body = await readForm(req, MAX_FORM_BYTES);
    const form = req.headers["content-type"]?.startsWith("application/x-www-form-urlencoded") ? body : undefined;
    const password = new URLSearchParams(form ?? "").get("password") ?? "";
    const hash = target.passwordHash ?? "";
    // Only a password that could be right costs a hash.
    const right =
      password !== "" &&
      password.length <= MAX_PASSWORD_LENGTH &&
      hash !== "" &&
      (await verifyPassword(password, hash));
    if (right) {
      res.writeHead(303, {
        Location: `/${slug}`,
        "Set-Cookie": cookies.issue({
          linkId: target.linkId,
          passwordHash: hash,
          path: `/${slug}`,
          secure: overTls(req),
          now: now(),
        }),
        "Cache-Control": "no-store",
        "Content-Length": "0",
        "Referrer-Policy": "no-referrer",
      });
      res.end();
      return "protected";
    }
    const waitAfter = await guesses.wrong(key);
    if (waitAfter > 0) return tooManyGuesses(res, waitAfter);
    sendPage(res, 403, WRONG_PASSWORD_PAGE);
    return "protected";
  };

  // Held once opened, so that a scan waits for no promise to classify its request.
  let classify: ((req: ClassifiedRequest) => ScanFacts) | undefined;

  return async (req, res, target, slug) => {
    const routing = target.routing!;
    classify ??= await options.classifier();
    const facts = classify(req);
    const at = now();
    const hash = target.passwordHash ?? "";
    const unlocked =
      routing.passwordProtected && hash !== "" && cookies.unlocks(req.headers.cookie, target.linkId, hash, at);
    const decision = decide(routing, new RequestVisitor(req, facts, options.visitorKeySecret, target.linkId), at, {
      destinationUrl: target.location,
      // The reservation decides the limit; once one was refused, scans that take none are refused too.
      scans: target.limitReached ? Number.POSITIVE_INFINITY : 0,
      unlocked,
    });
    if (req.method === "POST") {
      if (!routing.passwordProtected) {
        req.resume();
        sendPage(res, 405, NOT_FOUND_PAGE, { Allow: "GET, HEAD" });
        return "method_not_allowed";
      }
      if (decision.outcome === "password") return answerPassword(req, res, target, slug, facts);
      // Unlocked already, or ended meanwhile: the link's GET says what now.
      req.resume();
      res.writeHead(303, { Location: `/${slug}`, "Cache-Control": "no-store", "Content-Length": "0" });
      res.end();
      return "protected";
    }
    switch (decision.outcome) {
      case "password":
        sendPage(res, 200, PASSWORD_PAGE);
        return "protected";
      case "scheduled":
      case "expired":
      case "limit_reached":
        return ended(req, res, target, facts, decision);
      default: {
        // Only a scan that counts takes a place: a HEAD, a bot or a link preview is let through uncounted.
        const counted = req.method === "GET" && !facts.automated;
        if (routing.maxScans !== null && counted && !(await options.reserveScan(target.linkId, routing.maxScans))) {
          target.limitReached = true;
          return ended(req, res, target, facts, endedDecision(routing, "limit_reached"));
        }
        return redirect(req, res, target, facts, decision.destination_url!, routeOf(decision));
      }
    }
  };
}
