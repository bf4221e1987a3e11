import { Code } from "@connectrpc/connect";
import { z } from "zod";
import { serviceError } from "@qrplatform/platform";

// A create's idempotency key (CreateIdempotencyKey): the rules every create that takes one shares
// (QR codes, workspaces, webhook endpoints), so a retry finds what the first call made (ADR 0016).

/** The key as a create receives it: the client's key (with a bulk item's position) and the request's digest. */
export const createKeySchema = z.object({
  key: z.string().regex(/^[\x20-\x7e]{1,300}$/, "must be 1 to 300 printable ASCII characters"),
  fingerprint: z
    .instanceof(Uint8Array)
    .refine((digest) => digest.length === 32, "must be a SHA-256 digest of 32 bytes"),
});

/**
 * How long a create's idempotency key names what it made: as long as the edge keeps the key's answer
 * (ADR 0016). A key older than that may name a new create.
 */
export const CREATE_KEY_RETENTION_MS = 24 * 3600 * 1000;

/** The oldest creation time whose key still names what it made; a holder made before gives its key up. */
export function keysKeptSince(now: Date): Date {
  return new Date(now.getTime() - CREATE_KEY_RETENTION_MS);
}

/** The metadata of the errors below: which header the client sent the key in. */
const metadata = { header: "Idempotency-Key" };

/** Refuses a repeat of a key whose holder was made for another request (another method, path or body). */
export function requireSameRequest(recorded: Uint8Array | null, fingerprint: Uint8Array): void {
  if (!recorded || !Buffer.from(recorded).equals(Buffer.from(fingerprint))) {
    throw serviceError(
      Code.FailedPrecondition,
      "idempotency_key_reused",
      "This Idempotency-Key was already used for a different request (another method, path or body); use a new key for a new request.",
      { metadata },
    );
  }
}

/** The answer to a repeat whose first create is still running: retry once it is done. */
export function createInProgress() {
  return serviceError(
    Code.Aborted,
    "idempotency_key_in_progress",
    "A request with this Idempotency-Key is still running; retry it with the same key once it has finished.",
    { metadata },
  );
}
