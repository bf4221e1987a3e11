import { randomBytes } from "node:crypto";
import type { FieldProblem } from "@qrplatform/platform";

/** Generated slugs avoid the look-alikes 0 O 1 l I i and are lower case, so they survive case-folding scanners. */
export const SLUG_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz";
export const SLUG_LENGTH = 8;

// 248 is the largest multiple of 31 that fits in a byte: bytes at or above it are dropped, so every
// character is equally likely.
const UNBIASED_LIMIT = 256 - (256 % SLUG_ALPHABET.length);

/** A fresh slug from the CSPRNG. Uniqueness is the database's job; callers retry on a collision. */
export function generateSlug(): string {
  let slug = "";
  while (slug.length < SLUG_LENGTH) {
    for (const byte of randomBytes(SLUG_LENGTH * 2)) {
      if (byte < UNBIASED_LIMIT && slug.length < SLUG_LENGTH) slug += SLUG_ALPHABET[byte % SLUG_ALPHABET.length];
    }
  }
  return slug;
}

/**
 * Paths a vanity slug may never take: the platform's own routes on a shared host, and names browsers
 * and crawlers ask every host for.
 */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  "api",
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
    return { problem: { field: "vanity_slug", reason: "reserved", description: `"${slug}" is reserved by the platform` } };
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

/** Whether a path segment could be any slug at all; anything else is answered without a lookup. */
export function couldBeSlug(segment: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(segment);
}
