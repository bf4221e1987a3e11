import { createHash, createHmac, hkdfSync, timingSafeEqual } from "node:crypto";

// The cookie that remembers, for 24 hours, that a browser gave a protected code's password (ADR 0018):
// `qrp_unlock=<expiry>.<mac>` with Path=/<slug>, so the browser sends it only to that code's link,
// and a MAC over the link id, the expiry and a fingerprint of the stored password hash, so it unlocks
// that code alone and stops working once the password changes. The MAC key is derived from the
// visitor-key secret (HKDF with a label of its own), so the platform keeps one secret for visitors.

/** How long a right password is remembered. */
export const UNLOCK_SECONDS = 24 * 60 * 60;
const COOKIE = "qrp_unlock";
const VALUE = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

/** What the redirector needs of the unlock cookie: one to hand out, and whether a request has one. */
export interface UnlockCookies {
  /** The Set-Cookie value for a browser that gave the right password to the link at `path` ("/slug"). */
  issue(options: { linkId: string; passwordHash: string; path: string; secure: boolean; now: number }): string;
  /** Whether the Cookie header holds an unexpired unlock cookie of this link and this password. */
  unlocks(cookieHeader: string | undefined, linkId: string, passwordHash: string, now: number): boolean;
}

/** The unlock cookies of a platform whose visitor-key secret is `secret`. */
export function unlockCookies(secret: string): UnlockCookies {
  const key = Buffer.from(hkdfSync("sha256", secret, "", "qr-platform unlock cookie v1", 32));
  // The stored hash is itself salted and slow; its SHA-256 only names which password the cookie is for.
  const mac = (linkId: string, expires: number, passwordHash: string) =>
    createHmac("sha256", key)
      .update(`${linkId}\0${expires}\0`)
      .update(createHash("sha256").update(passwordHash).digest())
      .digest("base64url");
  return {
    issue({ linkId, passwordHash, path, secure, now }) {
      const expires = Math.floor(now / 1000) + UNLOCK_SECONDS;
      return (
        `${COOKIE}=${expires}.${mac(linkId, expires, passwordHash)}; Path=${path}; Max-Age=${UNLOCK_SECONDS}; ` +
        `HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`
      );
    },
    unlocks(cookieHeader, linkId, passwordHash, now) {
      if (!cookieHeader) return false;
      for (const pair of cookieHeader.split(";")) {
        const eq = pair.indexOf("=");
        if (eq === -1 || pair.slice(0, eq).trim() !== COOKIE) continue;
        const match = VALUE.exec(pair.slice(eq + 1).trim());
        if (match === null) continue;
        const expires = Number(match[1]);
        if (expires * 1000 <= now) continue;
        const given = Buffer.from(match[2]!);
        const expected = Buffer.from(mac(linkId, expires, passwordHash));
        if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
      }
      return false;
    },
  };
}
