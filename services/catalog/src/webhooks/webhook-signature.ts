// Standard Webhooks signing (https://www.standardwebhooks.com): HMAC-SHA256 of `id.timestamp.body`
// with the secret's bytes, sent as `v1,<base64>`; several signatures, space-separated, while a
// rotated secret still signs beside the new one.
import { createHmac, randomBytes } from "node:crypto";

const SECRET_PREFIX = "whsec_";

/** A new signing secret: "whsec_" and 32 random bytes in base64, as Standard Webhooks libraries read it. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString("base64")}`;
}

/** The `webhook-signature` header: one `v1,` signature per secret. */
export function webhookSignature(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
      return `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`;
    })
    .join(" ");
}
