// Passwords of protected codes, kept only as scrypt hashes (node:crypto) in a PHC-style string that
// carries its own parameters, so they can be raised later without invalidating stored hashes:
// `$scrypt$ln=15,r=8,p=1$<salt>$<hash>`, salt and hash in unpadded base64. ln=15, r=8, p=1 takes 32 MiB
// and tens of milliseconds per hash on a server core (ADR 0018): what a guess costs an attacker who has
// the hashes, while wrong guesses at the door are rate-limited per code and address anyway.
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

/** The cost of new hashes: N = 2^15, block size 8, no parallelism; 32 MiB of memory each. */
export const PASSWORD_HASH_COST = { ln: 15, r: 8, p: 1 } as const;

const SALT_BYTES = 16;
const KEY_BYTES = 32;
const FORMAT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

function derive(password: string, salt: Buffer, cost: { ln: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = {
    N: 2 ** cost.ln,
    r: cost.r,
    p: cost.p,
    // scrypt needs 128·N·r bytes; Node refuses more than 32 MiB unless told.
    maxmem: 256 * 2 ** cost.ln * cost.r,
  };
  // One spelling per password: "é" typed as one code point or as e and an accent is the same password.
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFC"), salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

const base64 = (bytes: Buffer) => bytes.toString("base64").replace(/=+$/, "");

/**
 * The stored form of a password: a scrypt hash with a random salt. `cost` is for tests, which hash
 * hundreds of passwords; everything else takes {@link PASSWORD_HASH_COST}.
 */
export async function hashPassword(
  password: string,
  cost: { ln: number; r: number; p: number } = PASSWORD_HASH_COST,
): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, cost);
  return `$scrypt$ln=${cost.ln},r=${cost.r},p=${cost.p}$${base64(salt)}$${base64(key)}`;
}

/**
 * Whether a password is the one a stored hash was made from, compared in constant time. A stored value
 * that is not such a hash (or asks for an absurd cost) matches no password.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = FORMAT.exec(stored);
  if (match === null) return false;
  const [ln, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (ln < 1 || ln > 20 || r < 1 || r > 16 || p < 1 || p > 4) return false;
  const salt = Buffer.from(match[4]!, "base64");
  const expected = Buffer.from(match[5]!, "base64");
  if (expected.length !== KEY_BYTES) return false;
  const key = await derive(password, salt, { ln, r, p });
  return timingSafeEqual(key, expected);
}
