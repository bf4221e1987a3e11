import { createHmac } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { isIP, isIPv4 } from "node:net";
import ipaddr from "ipaddr.js";
import { isbot } from "isbot";
import proxyaddr from "proxy-addr";
import { LRUCache } from "lru-cache";
import UAParser from "ua-parser-js";

export type DeviceType = "mobile" | "tablet" | "desktop" | "other";

/** What one request to a short link tells analytics. */
export interface ScanFacts {
  /**
   * The visitor's address as we trust it: the socket peer, or the forwarded client address when the
   * peer is a trusted proxy. IPv4-mapped IPv6 is unwrapped and IPv6 written in its canonical form, so
   * one visitor always gives the same string. "" only when the socket is already gone. Never stored;
   * only hashed.
   */
  clientAddress: string;
  /** ISO 3166-1 alpha-2 upper case, or "" when unknown. */
  country: string;
  deviceType: DeviceType;
  /** Family, e.g. "iOS", "Android", "Windows", "macOS", "Linux"; "" when unknown. At most 64 characters. */
  os: string;
  /** Family, e.g. "Chrome", "Safari", "Mobile Safari", "Firefox"; "" when unknown. At most 64 characters. */
  browser: string;
  /** Lower-case hostname (no port) of an http(s) Referer header; "" when absent or invalid. At most 253 characters. */
  referrerHost: string;
  /**
   * Crawlers, link-preview fetchers and other automated agents (including bare HTTP clients such as
   * curl): answered normally, never counted as scans. Also true for an empty/missing User-Agent.
   */
  automated: boolean;
  /** The raw User-Agent, truncated to 512 characters, for hashing only. */
  userAgent: string;
}

/** What classifying a request reads of it: its socket's peer address and its headers. */
export interface ClassifiedRequest {
  socket: { remoteAddress?: string | undefined };
  headers: IncomingHttpHeaders;
}

export interface ScanClassifierOptions {
  /** Addresses/CIDRs (or proxy-addr's names "loopback", "linklocal", "uniquelocal") whose X-Forwarded-For is believed. Empty: the socket peer is the client. */
  trustedProxies: readonly string[];
  /** A header set by a trusted proxy that carries the visitor's country (e.g. "cf-ipcountry"); believed only when the socket peer is a trusted proxy. */
  countryHeader?: string | undefined;
  /** Looks up the country of an address; "" when unknown. */
  countryOf: (address: string) => string;
}

const USER_AGENT_MAX_LENGTH = 512;
/**
 * Distinct User-Agents remembered with their verdict. Phones send a few thousand distinct agents
 * between them, while parsing one (ua-parser-js and isbot: dozens of regular expressions) costs tens
 * of microseconds, more than the rest of a redirect.
 */
const AGENTS_REMEMBERED = 10_000;
/**
 * Address spellings, peers and forwarding chains remembered with what they resolve to. Not countries:
 * the country database's walk (under a microsecond) costs less than a cache that misses, and most
 * scans come from an address not seen lately.
 */
const ADDRESSES_REMEMBERED = 50_000;
const FAMILY_MAX_LENGTH = 64;
/** What proxy-addr splits X-Forwarded-For on (and trims): a value without either is a single hop. */
const MORE_THAN_ONE_HOP = /[, ]/;
const HOSTNAME_MAX_LENGTH = 253;

// Cloudflare's verdicts for "no country data" and "Tor exit": the proxy knows, and it is not a country.
const UNKNOWN_COUNTRY_VERDICTS = new Set(["XX", "T1"]);

// ua-parser names each Linux distribution; analytics wants the family.
const LINUX_DISTRIBUTION =
  /^(?:[kxl]?ubuntu|debian|(?:open)?suse|gentoo|arch|slackware|fedora|mandriva|centos|pclinuxos|red ?hat|zenwalk|linpus|raspbian|deepin|manjaro|elementary os|sabayon|linspire|mint|mageia|vectorlinux)$/i;

// ua-parser gives no device type for desktops, so an untyped device counts as one only on these.
// (iPadOS Safari sends a Mac user agent by default, so those iPads count as desktops.)
const DESKTOP_OS_FAMILIES = new Set(["Windows", "macOS", "Linux", "Chromium OS", "FreeBSD", "OpenBSD", "NetBSD"]);

/**
 * Builds the per-request classifier. Invalid trusted-proxy entries throw here, at start-up, rather
 * than on the first scan.
 */
export function scanClassifier(options: ScanClassifierOptions): (req: ClassifiedRequest) => ScanFacts {
  const isTrustedProxy = options.trustedProxies.length > 0 ? proxyaddr.compile([...options.trustedProxies]) : undefined;
  const countryHeader = options.countryHeader?.toLowerCase();
  const agents = new LRUCache<string, AgentFacts>({ max: AGENTS_REMEMBERED });
  const agentFacts = (userAgent: string): AgentFacts => {
    let facts = agents.get(userAgent);
    if (facts === undefined) {
      facts = agentFactsOf(userAgent);
      agents.set(userAgent, facts);
    }
    return facts;
  };
  const forwardedClients = new LRUCache<string, string>({ max: ADDRESSES_REMEMBERED });
  // proxy-addr parses the address on every call; the peers are a handful of load balancers.
  const trustedPeers = new LRUCache<string, { trusted: boolean }>({ max: ADDRESSES_REMEMBERED });
  const isTrustedPeer = (peer: string): boolean => {
    if (!isTrustedProxy) return false;
    let known = trustedPeers.get(peer);
    if (known === undefined) {
      known = { trusted: isTrustedProxy(peer, 0) };
      trustedPeers.set(peer, known);
    }
    return known.trusted;
  };
  // Every other spelling seen, canonical or not (undefined: not an address), remembered.
  const canonical = new LRUCache<string, { address: string | undefined }>({ max: ADDRESSES_REMEMBERED });
  const canonicalAddressOf = (raw: string | undefined): string | undefined => {
    if (!raw) return undefined;
    // Node's check takes no leading zeros, so a dotted quad it accepts is already the one spelling:
    // no cache to fill with every new visitor's address.
    if (isIPv4(raw)) return raw;
    let known = canonical.get(raw);
    if (known === undefined) {
      known = { address: canonicalAddress(raw) };
      canonical.set(raw, known);
    }
    return known.address;
  };

  const clientOf = (req: ClassifiedRequest): { clientAddress: string; viaTrustedProxy: boolean } => {
    const peer = canonicalAddressOf(req.socket.remoteAddress);
    if (peer === undefined) return { clientAddress: "", viaTrustedProxy: false };
    if (!isTrustedPeer(peer)) return { clientAddress: peer, viaTrustedProxy: false };
    const forwarded = req.headers["x-forwarded-for"];
    // One hop, as one load balancer sends it: the walk below would stop at that hop, which is the
    // client when it is an address (else the peer stands in). Answered directly, since nearly every
    // scan's pair is new and remembering it would cost more than the walk saves.
    if (typeof forwarded === "string" && !MORE_THAN_ONE_HOP.test(forwarded)) {
      return { clientAddress: canonicalAddressOf(forwarded) ?? peer, viaTrustedProxy: true };
    }
    // The walk reads only the peer and X-Forwarded-For, so its answer is remembered for the pair.
    const key = `${peer}\n${typeof forwarded === "string" ? forwarded : (forwarded ?? []).join(",")}`;
    let address = forwardedClients.get(key);
    if (address === undefined) {
      address = forwardedClientOf(req, peer);
      forwardedClients.set(key, address);
    }
    return { clientAddress: address, viaTrustedProxy: true };
  };

  // [peer, nearest hop, ...], cut after the first hop that is not a trusted proxy. A trusted proxy
  // that wrote junk ("unknown", a typo) ends the walk on it; the nearest readable hop before it
  // stands in, which at worst is the peer itself.
  const forwardedClientOf = (req: ClassifiedRequest, peer: string): string => {
    // proxy-addr reads only the socket's remoteAddress and X-Forwarded-For of the request it is given.
    const hops = proxyaddr.all(req as IncomingMessage, isTrustedProxy!);
    for (let i = hops.length - 1; i >= 0; i--) {
      const address = canonicalAddressOf(hops[i]);
      if (address !== undefined) return address;
    }
    return peer;
  };

  return (req) => {
    const { clientAddress, viaTrustedProxy } = clientOf(req);
    const userAgent = (req.headers["user-agent"] ?? "").slice(0, USER_AGENT_MAX_LENGTH);
    const agent = agentFacts(userAgent);
    const proxyCountry = viaTrustedProxy && countryHeader ? countryFromHeader(req.headers[countryHeader]) : undefined;
    return {
      clientAddress,
      country: proxyCountry ?? (clientAddress ? options.countryOf(clientAddress) : ""),
      deviceType: agent.deviceType,
      os: agent.os,
      browser: agent.browser,
      referrerHost: referrerHostOf(req.headers.referer),
      automated: agent.automated,
      userAgent,
    };
  };
}

/** What a User-Agent alone tells. */
type AgentFacts = Pick<ScanFacts, "deviceType" | "os" | "browser" | "automated">;

function agentFactsOf(userAgent: string): AgentFacts {
  const { os, browser, device } = new UAParser(userAgent).getResult();
  const osFamily = osFamilyOf(os.name);
  return {
    deviceType: deviceTypeOf(device.type, osFamily),
    os: osFamily,
    browser: (browser.name ?? "").slice(0, FAMILY_MAX_LENGTH),
    automated: userAgent.trim() === "" || isbot(userAgent),
  };
}

/** A salted visitor key: HMAC-SHA256(secret, linkId \0 clientAddress \0 userAgent), base64url, first 22 chars. Stable per link, not linkable across links, no raw IP. */
export function visitorKey(
  secret: string,
  linkId: string,
  facts: Pick<ScanFacts, "clientAddress" | "userAgent">,
): string {
  return createHmac("sha256", secret)
    .update(`${linkId}\0${facts.clientAddress}\0${facts.userAgent}`)
    .digest("base64url")
    .slice(0, 22);
}

// A strictly written address in one spelling per visitor; undefined for anything else. A port some
// proxies append ("1.2.3.4:5678", "[2001:db8::1]:5678") is dropped. ipaddr.js alone would also
// accept forms such as "1" or "0x7f.1", hence node's strict check first.
function canonicalAddress(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const address = /^\[(.+)\](?::\d+)?$/.exec(raw)?.[1] ?? /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(raw)?.[1] ?? raw;
  return isIP(address) === 0 ? undefined : ipaddr.process(address).toString();
}

// The proxy's word is final when it names a country or says it cannot; anything else (absent,
// malformed, repeated) leaves the decision to our own lookup.
function countryFromHeader(value: string | string[] | undefined): string | undefined {
  if (typeof value !== "string") return undefined;
  // Letters are checked before upper-casing: "ß".toUpperCase() is "SS".
  if (!/^[A-Za-z0-9]{2}$/.test(value)) return undefined;
  const code = value.toUpperCase();
  if (UNKNOWN_COUNTRY_VERDICTS.has(code)) return "";
  return /^[A-Z]{2}$/.test(code) ? code : undefined;
}

function osFamilyOf(name: string | undefined): string {
  if (!name) return "";
  if (name === "Mac OS") return "macOS";
  if (LINUX_DISTRIBUTION.test(name)) return "Linux";
  return name.slice(0, FAMILY_MAX_LENGTH);
}

function deviceTypeOf(parsedType: string | undefined, osFamily: string): DeviceType {
  if (parsedType === "mobile" || parsedType === "tablet") return parsedType;
  return parsedType === undefined && DESKTOP_OS_FAMILIES.has(osFamily) ? "desktop" : "other";
}

function referrerHostOf(referer: string | undefined): string {
  const url = referer ? URL.parse(referer) : null;
  if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) return "";
  // WHATWG parsing already lower-cases and punycodes the hostname; a trailing dot names the same host.
  const hostname = url.hostname.replace(/\.$/, "");
  return hostname.length <= HOSTNAME_MAX_LENGTH ? hostname : "";
}
