import { z } from "zod";

/** QR-code names: 1 to 200 characters after trimming. */
export const qrCodeName = z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters");

const MAX_TAGS = 20;

/** Tags: at most 20, each 1 to 50 characters after trimming; duplicates dropped, order kept. */
export const qrCodeTags = z
  .array(z.string().trim().min(1, "must not be empty").max(50, "must be at most 50 characters"))
  .max(MAX_TAGS, `must hold at most ${MAX_TAGS} tags`)
  .transform((tags) => [...new Set(tags)]);

const utmValue = z.string().max(100, "must be at most 100 characters");

/** utm values: each optional, at most 100 characters; empty means not given. */
export const qrCodeUtm = z.object({ source: utmValue, medium: utmValue, campaign: utmValue });

/** The utm values that were given, or null when none were. */
export function presentUtm(utm: { source: string; medium: string; campaign: string } | undefined) {
  if (!utm) return null;
  const present = Object.fromEntries(Object.entries(utm).filter(([, value]) => value !== "")) as Record<string, string>;
  return Object.keys(present).length > 0 ? present : null;
}

/** The query parameters a link appends for utm values: utm_source, utm_medium, utm_campaign. */
export function utmQueryParameters(utm: Record<string, string> | null): Record<string, string> {
  return Object.fromEntries(Object.entries(utm ?? {}).map(([key, value]) => [`utm_${key}`, value]));
}
