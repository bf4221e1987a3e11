import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ReportDomainServingRequest } from "@qrplatform/api/links";
import { INVALID_CHARACTERS, isUuid, textProblem, type FieldProblem } from "@qrplatform/platform";
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

/** The columns a valid report sets, or every field problem of the request. */
export function servingReportOf(req: ReportDomainServingRequest): { report: ServingReport } | { problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  if (req.domainId === "") problems.push({ field: "domain_id", reason: "required", description: "is required" });
  else if (!isUuid(req.domainId)) problems.push({ field: "domain_id", reason: "invalid_format", description: "must be a UUID" });
  const serving = req.serving;
  if (!serving) {
    problems.push({ field: "serving", reason: "required", description: "is required" });
    return { problems };
  }

  if (serving.reason === "") problems.push({ field: "serving.reason", reason: "required", description: "is required" });
  else if (serving.reason.length > MAX_REASON_LENGTH) {
    problems.push({ field: "serving.reason", reason: "too_long", description: `must be at most ${MAX_REASON_LENGTH} characters` });
  } else if (!REASON.test(serving.reason)) {
    problems.push({
      field: "serving.reason",
      reason: "invalid_format",
      description: "must be an UpperCamelCase token of letters and digits, such as CertificateIssuing",
    });
  } else if ((serving.reason === SERVING_REASON) !== serving.serving) {
    problems.push({
      field: "serving.reason",
      reason: "invalid_value",
      description: serving.serving ? `must be ${SERVING_REASON} when serving` : `must say why the domain is not served, not ${SERVING_REASON}`,
    });
  }
  if (serving.serving && !(serving.routeAdmitted && serving.certificateReady)) {
    problems.push({
      field: "serving.serving",
      reason: "invalid_value",
      description: "can only be true when the route is admitted and the certificate is ready",
    });
  }

  if (serving.message.length > MAX_MESSAGE_LENGTH) {
    problems.push({ field: "serving.message", reason: "too_long", description: `must be at most ${MAX_MESSAGE_LENGTH} characters` });
  } else if (textProblem(serving.message)) {
    problems.push({ field: "serving.message", reason: INVALID_CHARACTERS, description: textProblem(serving.message)! });
  }

  let expiresAt: Date | null = null;
  if (serving.certificateExpireTime) {
    const { nanos } = serving.certificateExpireTime;
    expiresAt = timestampDate(serving.certificateExpireTime);
    const time = expiresAt.getTime();
    if (nanos < 0 || nanos > 999_999_999 || !(time >= EARLIEST_EXPIRY && time < LATEST_EXPIRY)) {
      problems.push({
        field: "serving.certificate_expire_time",
        reason: "out_of_range",
        description: "must be a valid time between the years 2000 and 9999",
      });
    }
  }

  if (problems.length > 0) return { problems };
  return {
    report: {
      serving: serving.serving,
      route_admitted: serving.routeAdmitted,
      certificate_ready: serving.certificateReady,
      // Stored to the millisecond, so a report is compared with the stored state at that precision.
      certificate_expires_at: expiresAt,
      serving_reason: serving.reason,
      serving_message: serving.message,
    },
  };
}
