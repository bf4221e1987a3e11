import { createHash, randomBytes } from "node:crypto";

/** Every secret starts with this, so leaked keys are recognisable by secret scanners and people. */
export const SECRET_PREFIX = "qrp_";

const BODY_LENGTH = 43; // 32 random bytes in base64url: 256 bits of entropy.
const SECRET_PATTERN = new RegExp(`^${SECRET_PREFIX}[A-Za-z0-9_-]{${BODY_LENGTH}}$`);

/** A new API key secret: the prefix and 256 random bits. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64url");
}

/** Whether a presented string has the shape of a secret at all; saves a database round trip for junk. */
export function looksLikeSecret(candidate: string): boolean {
  return SECRET_PATTERN.test(candidate);
}

/**
 * What is stored instead of the secret. A fast hash is right here: the secret has 256 bits of entropy,
 * so there is nothing to brute-force, and lookups by hash make comparison constant-time.
 */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** The part of a secret shown in key lists: the prefix and six characters. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, SECRET_PREFIX.length + 6);
}
