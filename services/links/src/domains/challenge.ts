import { randomBytes } from "node:crypto";

/** The DNS name a domain's owner puts the TXT challenge at. */
export const challengeRecordName = (hostname: string) => `_qr-platform-challenge.${hostname}`;

/** The TXT value that proves control of the hostname. */
export const challengeRecordValue = (token: string) => `qr-platform-verification=${token}`;

/** A new challenge token: 32 random bytes, base64url. */
export const newChallengeToken = () => randomBytes(32).toString("base64url");

/** What a TXT lookup saw. */
export type TxtLookup =
  | { kind: "records"; values: string[] }
  | { kind: "no_domain" }
  | { kind: "no_records" }
  | { kind: "timeout" }
  | { kind: "server_failure"; code: string }
  | { kind: "unreachable"; code: string };

/** What a verification leads to: a new state with the reason for a failure, or no change at all. */
export type VerificationOutcome = { state: "verified" } | { state: "failed"; reason: string } | { unavailable: string };

const quoted = (values: string[]) =>
  values
    .slice(0, 3)
    .map((v) => JSON.stringify(v.length > 120 ? `${v.slice(0, 120)}…` : v))
    .join(", ") + (values.length > 3 ? ` and ${values.length - 3} more` : "");

/**
 * The verification policy. A definite DNS answer decides the state either way. An indefinite one (a
 * timeout, a server failure) fails a domain that is not verified yet, but leaves a verified domain
 * verified: an outage somewhere in DNS must not take working vanity links down. A resolver that
 * refuses the connection is our problem, not the domain's, and changes nothing.
 */
export function verificationOutcome(
  currentState: string,
  recordName: string,
  expected: string,
  lookup: TxtLookup,
): VerificationOutcome {
  switch (lookup.kind) {
    case "records":
      if (lookup.values.includes(expected)) return { state: "verified" };
      return {
        state: "failed",
        reason: `TXT records at ${recordName} do not include the expected value; found ${quoted(lookup.values)}.`,
      };
    case "no_domain":
      return { state: "failed", reason: `${recordName} does not exist (NXDOMAIN); create a TXT record there.` };
    case "no_records":
      return { state: "failed", reason: `${recordName} has no TXT record; create one with the challenge value.` };
    case "unreachable":
      return {
        unavailable: `The DNS resolver could not be reached (${lookup.code}); nothing was changed. Try again later.`,
      };
    case "timeout":
    case "server_failure": {
      const seen = lookup.kind === "timeout" ? "timed out" : `failed (${lookup.code})`;
      if (currentState === "verified") {
        return { unavailable: `The DNS lookup of ${recordName} ${seen}; the domain stays verified. Try again later.` };
      }
      return {
        state: "failed",
        reason: `The DNS lookup of ${recordName} ${seen}; try again once its name servers answer.`,
      };
    }
  }
}
