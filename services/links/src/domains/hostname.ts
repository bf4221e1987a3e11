import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import type { FieldProblem } from "@qrplatform/platform";

/** Top-level names that never resolve on the public internet (RFC 6761, RFC 6762, ICANN's .internal). */
const NON_PUBLIC_TLDS: ReadonlySet<string> = new Set(["localhost", "local", "internal", "invalid", "test", "arpa", "onion"]);

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
    return problem("invalid_format", "must be a bare hostname such as go.example.com, without scheme, port, path or wildcard");
  }
  if (isIP(name.replace(/^\[|\]$/g, ""))) return problem("ip_address", "must be a DNS name, not an IP address");
  const ascii = domainToASCII(name);
  if (ascii === "") return problem("invalid_format", "is not a valid hostname");
  if (isIP(ascii.replace(/^\[|\]$/g, ""))) return problem("ip_address", "must be a DNS name, not an IP address");
  if (ascii.length > 253) return problem("too_long", "must be at most 253 characters");
  const labels = ascii.split(".");
  if (labels.some((label) => label.length > 63)) return problem("invalid_format", "must have labels of at most 63 characters");
  if (!labels.every((label) => LABEL.test(label))) {
    return problem("invalid_format", "must have labels of letters, digits and inner hyphens, separated by single dots");
  }
  const tld = labels.at(-1)!;
  if (NON_PUBLIC_TLDS.has(tld)) return problem("not_public", `must be a public DNS name; ".${tld}" names are not`);
  if (labels.length < 2) return problem("single_label", "must have at least two labels, such as go.example.com");
  if (/^\d+$/.test(tld)) return problem("ip_address", "must be a DNS name, not an IP address");
  return { hostname: ascii };
}
