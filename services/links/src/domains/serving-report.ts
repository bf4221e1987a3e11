import { create } from "@bufbuild/protobuf";
import { timestampDate, TimestampSchema } from "@bufbuild/protobuf/wkt";
import { z } from "zod";
import { checkedBy, parsedBy, requiredUuidSchema, textRuleProblem, type RuleProblem } from "@qrplatform/platform";
import type { ServingReport } from "./domains.table.js";

// What the domain operator may report about a domain (ReportDomainServing). The reason is the reason
// of its Ready condition, a stable machine token that tenants' tools may match on; the message is
// shown to the domain's owner.

/** An UpperCamelCase token such as "Serving" or "CertificateIssuing", as Kubernetes condition reasons are. */
const REASON = /^[A-Z][A-Za-z0-9]*$/;
const MAX_REASON_LENGTH = 64;
const MAX_MESSAGE_LENGTH = 1024;
/** The reason of a domain that is served. */
export const SERVING_REASON = "Serving";
/** Certificate expiry times outside these years are not real ones. */
const EARLIEST_EXPIRY = Date.UTC(2000, 0, 1);
const LATEST_EXPIRY = Date.UTC(10_000, 0, 1);

/** Why a Ready-condition reason is refused: it must be an UpperCamelCase token of at most 64 characters. */
function reasonTokenProblem(reason: string): RuleProblem | undefined {
  if (reason === "") return { reason: "required", description: "is required" };
  if (reason.length > MAX_REASON_LENGTH)
    return { reason: "too_long", description: `must be at most ${MAX_REASON_LENGTH} characters` };
  if (!REASON.test(reason)) {
    return {
      reason: "invalid_format",
      description: "must be an UpperCamelCase token of letters and digits, such as CertificateIssuing",
    };
  }
  return undefined;
}

/** Why a message shown to the domain's owner is refused: too long, or not one line of storable text. */
function messageProblem(message: string): RuleProblem | undefined {
  if (message.length > MAX_MESSAGE_LENGTH)
    return { reason: "too_long", description: `must be at most ${MAX_MESSAGE_LENGTH} characters` };
  return textRuleProblem(message);
}

/** A certificate's expiry as a date, refused outside the years 2000..9999 (or with impossible nanos). */
const certificateExpireTime = z.object({ seconds: z.bigint(), nanos: z.number() }).transform(
  parsedBy(({ seconds, nanos }: { seconds: bigint; nanos: number }) => {
    const expiresAt = timestampDate(create(TimestampSchema, { seconds, nanos }));
    const time = expiresAt.getTime();
    if (nanos >= 0 && nanos <= 999_999_999 && time >= EARLIEST_EXPIRY && time < LATEST_EXPIRY)
      return { value: expiresAt };
    return { problem: { reason: "out_of_range", description: "must be a valid time between the years 2000 and 9999" } };
  }),
);

const domainServing = z
  .object({
    serving: z.boolean(),
    reason: z.string().superRefine(checkedBy(reasonTokenProblem)),
    message: z.string().superRefine(checkedBy(messageProblem)),
    routeAdmitted: z.boolean(),
    certificateReady: z.boolean(),
    certificateExpireTime: certificateExpireTime.optional(),
  })
  .superRefine((serving, ctx) => {
    // A reason that is a token must also agree with whether the domain is served.
    if (!reasonTokenProblem(serving.reason) && (serving.reason === SERVING_REASON) !== serving.serving) {
      ctx.addIssue({
        code: "custom",
        path: ["reason"],
        message: serving.serving
          ? `must be ${SERVING_REASON} when serving`
          : `must say why the domain is not served, not ${SERVING_REASON}`,
        params: { reason: "invalid_value" },
      });
    }
    if (serving.serving && !(serving.routeAdmitted && serving.certificateReady)) {
      ctx.addIssue({
        code: "custom",
        path: ["serving"],
        message: "can only be true when the route is admitted and the certificate is ready",
        params: { reason: "invalid_value" },
      });
    }
  });

/** ReportDomainServing: the domain, and the columns its report sets. */
export const reportDomainServingRequest = z
  .object({
    domainId: requiredUuidSchema,
    serving: domainServing.optional(),
  })
  .superRefine(({ serving }, ctx) => {
    if (serving === undefined)
      ctx.addIssue({ code: "custom", path: ["serving"], message: "is required", params: { reason: "required" } });
  })
  .transform(({ domainId, serving }): { domainId: string; report: ServingReport } => ({
    domainId,
    report: {
      serving: serving!.serving,
      route_admitted: serving!.routeAdmitted,
      certificate_ready: serving!.certificateReady,
      // Stored to the millisecond, so a report is compared with the stored state at that precision.
      certificate_expires_at: serving!.certificateExpireTime ?? null,
      serving_reason: serving!.reason,
      serving_message: serving!.message,
    },
  }));
