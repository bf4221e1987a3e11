import { randomBytes } from "node:crypto";

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

/** Whether a path segment could be any slug at all; anything else is answered without a lookup. */
export function couldBeSlug(segment: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(segment);
}
