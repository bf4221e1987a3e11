// ISO 3166-1 alpha-2 country codes, from i18n-iso-countries' table (kept up to date with the ISO
// maintenance agency's changes). Only its code table is read: the package's main entry would load
// the country names of eighty languages, which routing never shows.
import codes from "i18n-iso-countries/codes.json" with { type: "json" };

const ALPHA_2: ReadonlySet<string> = new Set((codes as string[][]).map((row) => row[0]!));

/**
 * Whether a code is an ISO 3166-1 alpha-2 country code, written in upper case as analytics reports
 * countries ("JP", "DE"; also "XK", Kosovo's code in common use, which country databases report).
 */
export function isCountryCode(code: string): boolean {
  return ALPHA_2.has(code);
}
