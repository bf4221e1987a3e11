// The rules of a short link's request fields that need no database: the destination URL and a vanity
// slug. The links service enforces them on every link; the catalog checks them before it reserves a QR
// code's place in the account's capacity, so a request that can never succeed costs no reservation.
import type { z } from "zod";
import type { FieldProblem } from "./errors.js";
import { textRuleProblem } from "./validation.js";

/** The longest destination URL a link takes, in characters. */
export const MAX_DESTINATION_LENGTH = 2048;

/**
 * Why a destination URL is unacceptable, or undefined when it is fine: an absolute http or https URL
 * of at most 2048 characters with a host, no user name or password, and no control characters.
 */
export function destinationUrlProblem(value: string, field = "destination_url"): FieldProblem | undefined {
  const problem = (reason: string, description: string) => ({ field, reason, description });
  if (value.length === 0) return problem("required", "is required");
  if (value.length > MAX_DESTINATION_LENGTH)
    return problem("too_long", `must be at most ${MAX_DESTINATION_LENGTH} characters`);
  // The one text rule: no control character (CR, LF and TAB among them) may reach a Location header.
  const text = textRuleProblem(value);
  if (text) return problem(text.reason, text.description);
  if (value.trim() !== value) return problem("invalid_url", "must not start or end with spaces");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return problem("invalid_url", "must be an absolute URL such as https://example.com/page");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return problem("unsupported_scheme", "must be an http or https URL");
  if (url.hostname === "") return problem("invalid_url", "must have a host");
  if (url.username !== "" || url.password !== "")
    return problem("credentials_not_allowed", "must not contain a user name or password");
  return undefined;
}

/**
 * Paths a vanity slug may never take: the platform's own routes on a shared host, and names browsers
 * and crawlers ask every host for.
 */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  "api",
  "console",
  "docs",
  "healthz",
  "readyz",
  "livez",
  "metrics",
  "admin",
  "static",
  "assets",
  "favicon.ico",
  "robots.txt",
  "sitemap.xml",
  "security.txt",
  ".well-known",
  "apple-app-site-association",
  "login",
  "logout",
  "oauth",
  "www",
]);

const VANITY_PATTERN = /^[a-z0-9][a-z0-9_-]{1,62}[a-z0-9]$/;

/** A requested vanity slug in its stored form (lower case), or the problem with it. */
export function parseVanitySlug(requested: string): { slug: string } | { problem: FieldProblem } {
  const slug = requested.toLowerCase();
  if (RESERVED_SLUGS.has(slug)) {
    return {
      problem: { field: "vanity_slug", reason: "reserved", description: `"${slug}" is reserved by the platform` },
    };
  }
  if (!VANITY_PATTERN.test(slug)) {
    return {
      problem: {
        field: "vanity_slug",
        reason: "invalid_format",
        description: 'must be 3 to 64 characters of a-z, 0-9, "-" and "_", starting and ending with a letter or digit',
      },
    };
  }
  return { slug };
}

/** Why a requested vanity slug is refused, or undefined when it is fine: {@link parseVanitySlug} as a rule. */
export function vanitySlugProblem(requested: string): FieldProblem | undefined {
  const parsed = parseVanitySlug(requested);
  return "problem" in parsed ? parsed.problem : undefined;
}

/**
 * A zod refinement for a request that may name a vanity link: `vanityDomainId` and `vanitySlug` come
 * together or not at all, and the one given alone names the other as required.
 */
export function requireVanityPair(req: { vanityDomainId?: string; vanitySlug?: string }, ctx: z.RefinementCtx): void {
  const required = (field: "vanityDomainId" | "vanitySlug", other: string) =>
    ctx.addIssue({
      code: "custom",
      path: [field],
      message: `is required with ${other}`,
      params: { reason: "required" },
    });
  if (req.vanityDomainId !== undefined && req.vanitySlug === undefined) required("vanitySlug", "vanity_domain_id");
  if (req.vanitySlug !== undefined && req.vanityDomainId === undefined) required("vanityDomainId", "vanity_slug");
}
