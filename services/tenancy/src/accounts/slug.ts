import { randomBytes } from "node:crypto";

/** A URL-safe slug from a display name: lower case ASCII letters, digits and single hyphens, at most 48 characters. */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/g, "");
  return slug || "account";
}

/** The slug with a short random suffix, for when the plain slug is taken. */
export function withRandomSuffix(slug: string): string {
  return `${slug}-${randomBytes(3).toString("hex")}`;
}
