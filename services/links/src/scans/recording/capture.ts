import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { ScanFacts } from "./classify.js";
import type { Redirect, ScanRoute } from "./scan-recorder.js";

/**
 * Redirects as the answering thread captured them for a recording thread, one array per field, one
 * entry per redirect: what classifying reads and nothing else, in arrays that cross to the thread
 * as a handful of objects rather than one per redirect.
 */
export interface CapturedRedirects {
  linkId: string[];
  /** When each was answered, in Unix milliseconds. */
  at: number[];
  /** The socket's peer address, read while the socket was open. */
  peer: (string | undefined)[];
  userAgent: (string | undefined)[];
  /** X-Forwarded-For as Node joined it. */
  forwardedFor: (string | string[] | undefined)[];
  referer: (string | undefined)[];
  /** The trusted proxy's country header, when one is configured. */
  country: (string | string[] | undefined)[];
  /** The classification the answering thread already made (links with routing), so it is not made twice. */
  facts: (ScanFacts | undefined)[];
  /** The rule that decided each, when one did. */
  route: (ScanRoute | undefined)[];
}

export function emptyCapture(): CapturedRedirects {
  return {
    linkId: [],
    at: [],
    peer: [],
    userAgent: [],
    forwardedFor: [],
    referer: [],
    country: [],
    facts: [],
    route: [],
  };
}

/**
 * Appends what classifying `req` reads, or the classification when it was already made; `countryHeader`
 * as Node keys headers, in lower case.
 */
export function captureRedirect(
  capture: CapturedRedirects,
  req: IncomingMessage,
  linkId: string,
  at: number,
  countryHeader: string | undefined,
  facts?: ScanFacts,
  route?: ScanRoute,
): void {
  const { headers } = req;
  capture.linkId.push(linkId);
  capture.at.push(at);
  capture.peer.push(req.socket.remoteAddress);
  capture.userAgent.push(headers["user-agent"]);
  capture.forwardedFor.push(headers["x-forwarded-for"]);
  capture.referer.push(headers.referer);
  capture.country.push(countryHeader === undefined ? undefined : headers[countryHeader]);
  capture.facts.push(facts);
  capture.route.push(route);
}

/** The captured redirects as the recorder takes them, each with the headers classifying reads. */
export function* capturedRedirects(capture: CapturedRedirects, countryHeader: string | undefined): Generator<Redirect> {
  const { linkId, at, peer, userAgent, forwardedFor, referer, country, facts, route } = capture;
  for (let i = 0; i < linkId.length; i++) {
    const headers: IncomingHttpHeaders = {
      "user-agent": userAgent[i],
      "x-forwarded-for": forwardedFor[i],
      referer: referer[i],
    };
    if (countryHeader !== undefined) headers[countryHeader] = country[i];
    const classified = facts[i];
    const decided = route[i];
    yield {
      linkId: linkId[i]!,
      at: at[i]!,
      request: { socket: { remoteAddress: peer[i] }, headers },
      ...(classified !== undefined && { facts: classified }),
      ...(decided !== undefined && { route: decided }),
    };
  }
}
