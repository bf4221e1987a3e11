// The visitor facts rules read, from what the redirect path already knows of a request: the device
// and OS families that scan classification works out, and the Accept-Language header.
import type { Device, Os } from "./types.js";

const OS_OF: Record<string, Os> = {
  iOS: "ios",
  Android: "android",
  Windows: "windows",
  macOS: "macos",
  Linux: "linux",
};

/** A rule's OS token for an OS family as scan classification names it ("iOS", "macOS", …); `other` otherwise. */
export function osOf(family: string): Os {
  return OS_OF[family] ?? "other";
}

/** A rule's device token for a device type as scan classification names it; "" for those rules cannot name. */
export function deviceOf(deviceType: string): Device | "" {
  return deviceType === "mobile" || deviceType === "tablet" || deviceType === "desktop" ? deviceType : "";
}

const MAX_LANGUAGE_ENTRIES = 32;

/**
 * The primary subtag, in lower case, of the visitor's first preference in an Accept-Language header
 * (RFC 9110 §12.5.4): the entry with the highest q, the first written among equals; entries with
 * q=0 or a malformed q, and the wildcard, are no preference. "" when there is none. Only the first
 * 32 entries are read.
 */
export function languageOf(acceptLanguage: string | string[] | undefined): string {
  if (typeof acceptLanguage !== "string" || acceptLanguage === "") return "";
  let best = "";
  let bestQ = 0;
  let start = 0;
  for (let n = 0; n < MAX_LANGUAGE_ENTRIES && start < acceptLanguage.length; n++) {
    let end = acceptLanguage.indexOf(",", start);
    if (end === -1) end = acceptLanguage.length;
    const entry = acceptLanguage.slice(start, end);
    start = end + 1;
    const semicolon = entry.indexOf(";");
    const range = (semicolon === -1 ? entry : entry.slice(0, semicolon)).trim();
    let q = 1;
    if (semicolon !== -1) {
      const match = /^\s*q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*$/i.exec(entry.slice(semicolon + 1));
      q = match === null ? 0 : Number(match[1]);
    }
    if (q <= bestQ) continue;
    const primary = /^([A-Za-z]{1,8})(?:-[A-Za-z0-9]{1,8})*$/.exec(range)?.[1];
    if (primary === undefined) continue;
    best = primary.toLowerCase();
    bestQ = q;
    if (q === 1) break;
  }
  return best;
}
