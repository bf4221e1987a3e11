// The rules for fetching a URL a customer gave us without letting it reach into our own network
// (server-side request forgery): every address a host resolves to must be public, and the connection
// goes to exactly those addresses, so the name cannot be re-pointed between the check and the
// connection. The logo fetcher and the webhook sender both go through here.
import { lookup as systemLookup } from "node:dns/promises";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";

/** An address a host name resolved to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** How a host name is resolved: to every address it has. */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

/** Which addresses a connection may go to. */
export type AddressPolicy = (address: string) => boolean;

/**
 * Whether an address is on the public internet. IPv4-mapped IPv6 addresses are judged as IPv4, and
 * anything that is not a plainly written address is refused: ipaddr.js also reads forms such as
 * 010.0.0.1 or 127.1, which other software may read differently.
 */
export function isPublicAddress(address: string): boolean {
  if (isIP(address) === 0) return false;
  return ipaddr.process(address).range() === "unicast";
}

/** Public addresses, and loopback ones too: only for tests whose receivers listen on this machine. */
export function isPublicOrLoopbackAddress(address: string): boolean {
  if (isIP(address) === 0) return false;
  const range = ipaddr.process(address).range();
  return range === "unicast" || range === "loopback";
}

/** Asks the system resolver for every address of a host name. */
export async function lookupWithSystem(hostname: string): Promise<ResolvedAddress[]> {
  const found = await systemLookup(hostname, { all: true });
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

/** Why a host may not be connected to: it resolves to an address the policy refuses, or to none. */
export type HostRefusal = "forbidden_address" | "unresolvable";

/**
 * The addresses of a URL's host (brackets of an IPv6 literal removed), provided every one of them is
 * allowed; an IP literal is its own address. A lookup slower than the deadline is a failure.
 */
export async function resolveAllowedHost(
  host: string,
  options: { lookup?: ResolveHost; isAllowedAddress?: AddressPolicy; deadline: AbortSignal },
): Promise<ResolvedAddress[] | { refused: HostRefusal }> {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  const family = isIP(bare);
  let addresses: ResolvedAddress[];
  if (family === 4 || family === 6) {
    addresses = [{ address: bare, family }];
  } else {
    try {
      addresses = await untilDeadline((options.lookup ?? lookupWithSystem)(bare), options.deadline);
    } catch {
      return { refused: "unresolvable" };
    }
    if (addresses.length === 0) return { refused: "unresolvable" };
  }
  const allowed = options.isAllowedAddress ?? isPublicAddress;
  if (!addresses.every(({ address }) => allowed(address))) return { refused: "forbidden_address" };
  return addresses;
}

/** Settles like `work`, or rejects once the deadline passes; lookups cannot be aborted themselves. */
export function untilDeadline<T>(work: Promise<T>, deadline: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onDeadline = () => reject(deadline.reason);
    if (deadline.aborted) return onDeadline();
    deadline.addEventListener("abort", onDeadline, { once: true });
    work.then(resolve, reject).finally(() => deadline.removeEventListener("abort", onDeadline));
  });
}

/**
 * A lookup for `http.request` that answers with addresses already checked instead of asking DNS
 * again. Use it with `agent: false`: a pooled socket may be connected to another resolution.
 */
export function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    // Node asks for all addresses when it may try several (happy eyeballs), otherwise for one.
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  };
}
