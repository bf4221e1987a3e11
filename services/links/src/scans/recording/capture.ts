import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { DeviceType, ScanFacts } from "./classify.js";
import type { Redirect, ScanRoute } from "./scan-recorder.js";

/**
 * Classifications the answering thread already made (links with routing), one array per fact, for
 * the redirects at `index`: arrays of strings cross to a thread for a fraction of what an object per
 * redirect costs, whose every key would be written and read again.
 */
export interface CapturedFacts {
  /** The index, among the captured redirects, of each classified one. */
  index: number[];
  clientAddress: string[];
  country: string[];
  deviceType: DeviceType[];
  os: string[];
  browser: string[];
  referrerHost: string[];
  automated: boolean[];
  userAgent: string[];
}

/**
 * Redirects as the answering thread captured them for a recording thread, one array per field, one
 * entry per redirect: what classifying reads and nothing else, in arrays that cross to the thread
 * as a handful of objects rather than one per redirect.
 */
export interface CapturedRedirects {
  linkId: string[];
  /** When each was answered, in Unix milliseconds. */
  at: number[];
  /** The socket's peer address, read while the socket was open; undefined for a classified one. */
  peer: (string | undefined)[];
  userAgent: (string | undefined)[];
  /** X-Forwarded-For as Node joined it. */
  forwardedFor: (string | string[] | undefined)[];
  referer: (string | undefined)[];
  /** The trusted proxy's country header, when one is configured. */
  country: (string | string[] | undefined)[];
  /** The classifications the answering thread already made, so they are not made twice. */
  facts: CapturedFacts;
  /** The rule that decided each, when one did, and the variant of a split rule (-1 for none). */
  ruleId: (string | undefined)[];
  variant: number[];
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
    facts: {
      index: [],
      clientAddress: [],
      country: [],
      deviceType: [],
      os: [],
      browser: [],
      referrerHost: [],
      automated: [],
      userAgent: [],
    },
    ruleId: [],
    variant: [],
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
  if (facts === undefined) {
    const { headers } = req;
    capture.peer.push(req.socket.remoteAddress);
    capture.userAgent.push(headers["user-agent"]);
    capture.forwardedFor.push(headers["x-forwarded-for"]);
    capture.referer.push(headers.referer);
    capture.country.push(countryHeader === undefined ? undefined : headers[countryHeader]);
  } else {
    const classified = capture.facts;
    classified.index.push(capture.linkId.length);
    classified.clientAddress.push(facts.clientAddress);
    classified.country.push(facts.country);
    classified.deviceType.push(facts.deviceType);
    classified.os.push(facts.os);
    classified.browser.push(facts.browser);
    classified.referrerHost.push(facts.referrerHost);
    classified.automated.push(facts.automated);
    classified.userAgent.push(facts.userAgent);
    capture.peer.push(undefined);
    capture.userAgent.push(undefined);
    capture.forwardedFor.push(undefined);
    capture.referer.push(undefined);
    capture.country.push(undefined);
  }
  capture.linkId.push(linkId);
  capture.at.push(at);
  capture.ruleId.push(route?.ruleId);
  capture.variant.push(route?.variant ?? -1);
}

/** The captured redirects as the recorder takes them, each with the headers classifying reads. */
export function* capturedRedirects(capture: CapturedRedirects, countryHeader: string | undefined): Generator<Redirect> {
  const { linkId, at, peer, userAgent, forwardedFor, referer, country, facts, ruleId, variant } = capture;
  let next = 0;
  for (let i = 0; i < linkId.length; i++) {
    const headers: IncomingHttpHeaders = {
      "user-agent": userAgent[i],
      "x-forwarded-for": forwardedFor[i],
      referer: referer[i],
    };
    if (countryHeader !== undefined) headers[countryHeader] = country[i];
    let classified: ScanFacts | undefined;
    if (facts.index[next] === i) {
      classified = {
        clientAddress: facts.clientAddress[next]!,
        country: facts.country[next]!,
        deviceType: facts.deviceType[next]!,
        os: facts.os[next]!,
        browser: facts.browser[next]!,
        referrerHost: facts.referrerHost[next]!,
        automated: facts.automated[next]!,
        userAgent: facts.userAgent[next]!,
      };
      next++;
    }
    const redirect: Redirect = {
      linkId: linkId[i]!,
      at: at[i]!,
      request: { socket: { remoteAddress: peer[i] }, headers },
    };
    if (classified !== undefined) redirect.facts = classified;
    const decidedBy = ruleId[i];
    if (decidedBy !== undefined)
      redirect.route = variant[i]! < 0 ? { ruleId: decidedBy } : { ruleId: decidedBy, variant: variant[i]! };
    yield redirect;
  }
}
