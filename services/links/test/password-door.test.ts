// The pieces of a protected code's door: the unlock cookie (that code only, that password only, 24
// hours) and the count of wrong guesses per code and address, in memory and in Redis (REDIS_URL).
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "@qrplatform/platform";
import {
  memoryPasswordGuesses,
  redisPasswordGuesses,
  WRONG_GUESSES,
  type PasswordGuesses,
} from "../src/redirects/password-guesses.js";
import { UNLOCK_SECONDS, unlockCookies } from "../src/redirects/unlock-cookie.js";

const NOW = Date.parse("2026-12-01T09:00:00Z");
const cookies = unlockCookies("a visitor-key secret of the test");
const linkId = randomUUID();
const hash = "$scrypt$ln=15,r=8,p=1$c2FsdA$aGFzaA";

/** The Cookie header a browser sends back for a Set-Cookie value. */
const sentBack = (setCookie: string) => setCookie.split(";")[0]!;

describe("the unlock cookie", () => {
  const issued = cookies.issue({ linkId, passwordHash: hash, path: "/abc123", secure: true, now: NOW });

  it("is scoped to the code's path, unreadable to scripts, and kept 24 hours", () => {
    expect(issued).toMatch(
      /^qrp_unlock=\d+\.[A-Za-z0-9_-]{43}; Path=\/abc123; Max-Age=86400; HttpOnly; SameSite=Lax; Secure$/,
    );
    expect(cookies.issue({ linkId, passwordHash: hash, path: "/x", secure: false, now: NOW })).not.toContain("Secure");
  });

  it("unlocks its code among other cookies", () => {
    expect(cookies.unlocks(`a=b; ${sentBack(issued)}; c=d`, linkId, hash, NOW)).toBe(true);
  });

  it("unlocks no other code", () => {
    expect(cookies.unlocks(sentBack(issued), randomUUID(), hash, NOW)).toBe(false);
  });

  it("stops unlocking once the password changed", () => {
    expect(cookies.unlocks(sentBack(issued), linkId, "$scrypt$ln=15,r=8,p=1$b3RoZXI$aGFzaA", NOW)).toBe(false);
  });

  it("stops unlocking after 24 hours", () => {
    expect(cookies.unlocks(sentBack(issued), linkId, hash, NOW + UNLOCK_SECONDS * 1000 - 1000)).toBe(true);
    expect(cookies.unlocks(sentBack(issued), linkId, hash, NOW + UNLOCK_SECONDS * 1000)).toBe(false);
  });

  it("refuses a changed expiry, a forged MAC, and another secret's cookie", () => {
    const [expires, mac] = sentBack(issued).slice("qrp_unlock=".length).split(".") as [string, string];
    const later = `qrp_unlock=${Number(expires) + 86400}.${mac}`;
    const forged = `qrp_unlock=${expires}.${mac.slice(0, -1)}${mac.endsWith("A") ? "B" : "A"}`;
    const foreign = sentBack(
      unlockCookies("another secret").issue({ linkId, passwordHash: hash, path: "/abc123", secure: true, now: NOW }),
    );
    for (const header of [later, forged, foreign, "qrp_unlock=", "qrp_unlock", "", undefined])
      expect(cookies.unlocks(header, linkId, hash, NOW)).toBe(false);
  });
});

const guessesTests = (name: string, open: () => Promise<PasswordGuesses>) =>
  describe(`wrong guesses ${name}`, () => {
    let guesses: PasswordGuesses | undefined;
    afterAll(async () => {
      await guesses?.close();
    });

    it(`allow ${WRONG_GUESSES} per code and address, then make that pair wait`, async () => {
      guesses = await open();
      const key = `${randomUUID()}:198.51.100.7`;
      for (let i = 1; i < WRONG_GUESSES; i++) {
        expect(await guesses.waitFor(key)).toBe(0);
        expect(await guesses.wrong(key)).toBe(0);
      }
      expect(await guesses.waitFor(key)).toBe(0);
      const wait = await guesses.wrong(key);
      expect(wait).toBeGreaterThan(14 * 60);
      expect(wait).toBeLessThanOrEqual(15 * 60);
      expect(await guesses.waitFor(key)).toBeGreaterThan(0);
      expect(await guesses.wrong(key)).toBeGreaterThan(0);
      // Another address at the same code, and the same address at another code, still guess.
      expect(await guesses.waitFor(key.replace("198.51.100.7", "198.51.100.8"))).toBe(0);
      expect(await guesses.waitFor(`${randomUUID()}:198.51.100.7`)).toBe(0);
    });
  });

guessesTests("in memory", async () => memoryPasswordGuesses());
if (process.env.REDIS_URL) {
  const redisUrl = process.env.REDIS_URL;
  guessesTests("in Redis", () => redisPasswordGuesses(redisUrl, createLogger({ service: "test", level: "silent" })));
}
