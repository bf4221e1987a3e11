import { domainToASCII } from "node:url";
import { isSameHost } from "../domains/hostname.js";

/** A Host header split into its hostname (lower case, no trailing dot) and port ("" when absent). */
export interface RequestHost {
  hostname: string;
  port: string;
}

/** Parses a Host header; undefined for anything that is not a plain host with an optional port. */
export function parseRequestHost(host: string): RequestHost | undefined {
  if (!/^[A-Za-z0-9.\-[\]:]{1,260}$/.test(host)) return undefined;
  try {
    const url = new URL(`http://${host}`);
    const hostname = url.hostname.replace(/\.$/, "");
    return hostname ? { hostname: domainToASCII(hostname) || hostname, port: url.port } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a request was made to the default short domain. The port must match too, except that a
 * request naming 80 or 443 matches a base URL without a port. Loopback names are interchangeable, so
 * `npm start`'s links work whether opened at 127.0.0.1, localhost or [::1]; the rule that refuses
 * links to our own short domain compares hosts the same way (isSameHost).
 */
export function shortDomainMatcher(shortLinkBaseUrl: string): (host: RequestHost) => boolean {
  const base = new URL(shortLinkBaseUrl);
  return (host) => {
    const sameName = isSameHost(host.hostname, base.hostname);
    const samePort = host.port === base.port || (base.port === "" && (host.port === "80" || host.port === "443"));
    return sameName && samePort;
  };
}
