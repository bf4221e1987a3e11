import { randomBytes } from "node:crypto";

/**
 * A URL-safe slug from a display name: lower-case ASCII letters, digits and single hyphens, at most
 * 48 characters, accents folded ("Acme Café" -> "acme-cafe"); `fallback` when nothing is left.
 */
export function slugify(name: string, fallback: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/g, "");
  return slug || fallback;
}

/**
 * Candidate slugs for a unique insert: the plain slug first, then random suffixes, which practically
 * never clash twice.
 */
export function slugCandidates(name: string, fallback: string): string[] {
  const base = slugify(name, fallback);
  const suffixed = () => `${base}-${randomBytes(3).toString("hex")}`;
  return [base, suffixed(), suffixed()];
}

/** Whether a database error is a unique-constraint violation (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && "code" in error && error.code === "23505";
}
