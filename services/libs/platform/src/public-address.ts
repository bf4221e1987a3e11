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
 * Whether an address is on the public internet. IPv6 forms that carry an IPv4 address inside are
 * judged by it too: IPv4-mapped (::ffff:a.b.c.d) as that IPv4 address; NAT64 (64:ff9b::/96 and
 * 64:ff9b:1::/48), 6to4 (2002::/16), Teredo (2001::/32) and SIIT (::ffff:0:a.b.c.d) are refused
 * whole, as ipaddr.js gives them ranges of their own; IPv4-compatible (::a.b.c.d) and ISATAP
 * (…:0:5efe:a.b.c.d) addresses, which ipaddr.js counts as unicast, are refused when the IPv4
 * address inside is not public. Anything that is not a plainly written address is refused: ipaddr.js
 * also reads forms such as 010.0.0.1 or 127.1, which other software may read differently.
 */
export function isPublicAddress(address: string): boolean {
  return rangesOf(address)?.every((range) => range === "unicast") ?? false;
}

/**
 * Public addresses, and loopback ones too when written plainly (127.0.0.0/8, ::1; never inside
 * another form): only for tests whose receivers listen on this machine.
 */
export function isPublicOrLoopbackAddress(address: string): boolean {
  if (isPublicAddress(address)) return true;
  const family = isIP(address);
  if (family === 4) return ipaddr.IPv4.parse(address).range() === "loopback";
  return family === 6 && URL.canParse(`http://[${address}]/`) && new URL(`http://[${address}]/`).hostname === "[::1]";
}

/**
 * The ipaddr.js ranges an address is judged by: its own, and that of the IPv4 address inside it
 * where it carries one; undefined for anything that is not a plainly written address.
 */
function rangesOf(address: string): string[] | undefined {
  const family = isIP(address);
  if (family === 4) return [ipaddr.IPv4.parse(address).range()];
  if (family !== 6 || !URL.canParse(`http://[${address}]/`)) return undefined;
  // Read from the URL's form (hexadecimal words only): ipaddr.js reads "::a.b.c.d" as "::ffff:a.b.c.d".
  const ipv6 = ipaddr.IPv6.parse(new URL(`http://[${address}]/`).hostname.slice(1, -1));
  if (ipv6.isIPv4MappedAddress()) return [ipv6.toIPv4Address().range()];
  const inside = embeddedIpv4(ipv6.parts);
  return inside ? [ipv6.range(), inside.range()] : [ipv6.range()];
}

/** The IPv4 address in the last 32 bits of an IPv4-compatible (::/96) or ISATAP address, if it is one. */
function embeddedIpv4(words: number[]): ipaddr.IPv4 | undefined {
  const ipv4Compatible = words.slice(0, 6).every((word) => word === 0);
  // ISATAP's interface identifier is 0000:5efe or 0200:5efe, with the group bit set or not.
  const isatap = (words[4]! & 0xfcff) === 0 && words[5] === 0x5efe;
  if (!ipv4Compatible && !isatap) return undefined;
  return new ipaddr.IPv4([words[6]! >> 8, words[6]! & 0xff, words[7]! >> 8, words[7]! & 0xff]);
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
