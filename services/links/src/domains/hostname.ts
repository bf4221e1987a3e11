import { BlockList, isIP } from "node:net";
import { domainToASCII } from "node:url";
import type { FieldProblem } from "@qrplatform/platform";

/** Top-level names that never resolve on the public internet (RFC 6761, RFC 6762, ICANN's .internal). */
const NON_PUBLIC_TLDS: ReadonlySet<string> = new Set([
  "localhost",
  "local",
  "internal",
  "invalid",
  "test",
  "arpa",
  "onion",
]);

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A hostname as stored: trimmed, lower-cased, one trailing dot dropped and converted to ASCII (IDNA),
 * or the problem with it. Only public DNS names qualify: no IP address, no localhost or other
 * non-public suffix, at least two labels of 1 to 63 letters, digits and inner hyphens, at most 253
 * characters, and not all digits at the end (which would be an IPv4 address in disguise).
 */
export function parseHostname(input: string): { hostname: string } | { problem: FieldProblem } {
  const problem = (reason: string, description: string) => ({ problem: { field: "hostname", reason, description } });
  let name = input.trim().toLowerCase();
  if (name.endsWith(".")) name = name.slice(0, -1);
  if (name === "") return problem("required", "is required");
  // URL syntax would be silently cut off by the IDNA conversion ("a/b.com" becomes "a"), so refuse it first.
  if (/[\s/\\?#@:%*]/.test(name) && !isIP(name.replace(/^\[|\]$/g, ""))) {
    return problem(
      "invalid_format",
      "must be a bare hostname such as go.example.com, without scheme, port, path or wildcard",
    );
  }
  if (isIP(name.replace(/^\[|\]$/g, ""))) return problem("ip_address", "must be a DNS name, not an IP address");
  const ascii = domainToASCII(name);
  if (ascii === "") return problem("invalid_format", "is not a valid hostname");
  if (isIP(ascii.replace(/^\[|\]$/g, ""))) return problem("ip_address", "must be a DNS name, not an IP address");
  if (ascii.length > 253) return problem("too_long", "must be at most 253 characters");
  const labels = ascii.split(".");
  if (labels.some((label) => label.length > 63))
    return problem("invalid_format", "must have labels of at most 63 characters");
  if (!labels.every((label) => LABEL.test(label))) {
    return problem("invalid_format", "must have labels of letters, digits and inner hyphens, separated by single dots");
  }
  const tld = labels.at(-1)!;
  if (NON_PUBLIC_TLDS.has(tld)) return problem("not_public", `must be a public DNS name; ".${tld}" names are not`);
  if (labels.length < 2) return problem("single_label", "must have at least two labels, such as go.example.com");
  if (/^\d+$/.test(tld)) return problem("ip_address", "must be a DNS name, not an IP address");
  return { hostname: ascii };
}

/**
 * A hostname in the one form hostnames are compared in: lower case, ASCII (IDNA) and without trailing
 * dots, so `QR.Example.com.`, `qr.example.com` and a Unicode name and its punycode compare equal. IPv6
 * addresses keep their brackets, as the URL parser writes them (`[::1]`).
 */
export function canonicalHostname(hostname: string): string {
  const name = hostname.toLowerCase().replace(/\.+$/, "");
  if (name.startsWith("[")) return name;
  return domainToASCII(name) || name;
}

/**
 * Addresses that reach this very machine: 127.0.0.0/8 and ::1 (loopback), and the unspecified 0.0.0.0
 * and ::, which a client connecting to them also lands on this machine with. IPv4-mapped IPv6 forms
 * (`[::ffff:7f00:1]`) match as their IPv4 address.
 */
const THIS_MACHINE = new BlockList();
THIS_MACHINE.addSubnet("127.0.0.0", 8, "ipv4");
THIS_MACHINE.addSubnet("0.0.0.0", 8, "ipv4");
THIS_MACHINE.addAddress("::1", "ipv6");
THIS_MACHINE.addAddress("::", "ipv6");

/**
 * Whether a canonical hostname names this machine: `localhost` and names under it (RFC 6761), or an
 * address of THIS_MACHINE in any spelling the URL parser accepts.
 */
function isLoopbackHostname(hostname: string): boolean {
  if (hostname === "localhost" || hostname.endsWith(".localhost")) return true;
  const address = hostname.replace(/^\[|\]$/g, "");
  const family = isIP(address);
  return family !== 0 && THIS_MACHINE.check(address, family === 4 ? "ipv4" : "ipv6");
}

/**
 * Whether two hostnames name the same host: equal in canonical form, or both loopback spellings
 * (`localhost`, `127.0.0.1`, `[::1]` …), which all reach the same process on this machine.
 */
export function isSameHost(a: string, b: string): boolean {
  const left = canonicalHostname(a);
  const right = canonicalHostname(b);
  return left === right || (isLoopbackHostname(left) && isLoopbackHostname(right));
}
