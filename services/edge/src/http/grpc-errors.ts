import { Code, ConnectError } from "@connectrpc/connect";
import { errorInfoOf } from "@qrplatform/platform";
import { ApiError } from "./api-error.js";

/** The HTTP status and default public code for each gRPC code a service may answer with. */
const BY_GRPC_CODE: Partial<Record<Code, { status: number; code: string }>> = {
  [Code.InvalidArgument]: { status: 400, code: "validation_error" },
  [Code.OutOfRange]: { status: 400, code: "validation_error" },
  [Code.NotFound]: { status: 404, code: "not_found" },
  [Code.AlreadyExists]: { status: 409, code: "conflict" },
  [Code.Aborted]: { status: 409, code: "conflict" },
  [Code.FailedPrecondition]: { status: 409, code: "failed_precondition" },
  [Code.PermissionDenied]: { status: 403, code: "forbidden" },
  [Code.ResourceExhausted]: { status: 429, code: "rate_limited" },
  [Code.Unimplemented]: { status: 501, code: "not_implemented" },
  [Code.Unavailable]: { status: 503, code: "service_unavailable" },
  [Code.DeadlineExceeded]: { status: 504, code: "upstream_timeout" },
};

/**
 * Reasons whose status differs from their gRPC code's default. A capacity limit is RESOURCE_EXHAUSTED
 * inside, but for a client it is a plan limit (403), not a rate limit to retry (429).
 */
const STATUS_BY_REASON: Record<string, number> = {
  qr_code_limit_reached: 403,
  link_limit_reached: 403,
  premium_frames_required: 403,
};

/** Metadata that carries counts; ErrorInfo holds strings, the API shows numbers. */
const NUMERIC_METADATA = new Set(["limit", "used"]);

/** Service field names that the REST API spells differently. */
const PUBLIC_FIELD_NAMES: Record<string, string> = { page_size: "limit", page_token: "cursor", domain_id: "vanity_domain_id", from_date: "from", to_date: "to" };

/**
 * A service's field path as the REST client wrote it: renamed where the API differs, and camelCase
 * inside `design`, whose keys the contract spells that way (design.frame.label_top -> design.frame.labelTop).
 */
function publicFieldName(field: string): string {
  if (field.startsWith("design.")) return field.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  return PUBLIC_FIELD_NAMES[field] ?? field;
}

/**
 * Turns a service's error into the public error: the ErrorInfo reason becomes the code, field
 * violations become `details.fields`. Errors that are the platform's fault become a bare 500 whose
 * message reveals nothing; the caller logs the original.
 */
export function apiErrorFromGrpc(error: ConnectError): ApiError {
  const info = errorInfoOf(error);
  // UNAUTHENTICATED without a reason is the edge's own internal credential being refused: our fault.
  if (error.code === Code.Unauthenticated && info?.reason) {
    return new ApiError(401, info.reason, error.rawMessage, undefined, { "WWW-Authenticate": 'Bearer error="invalid_token"' });
  }
  const mapped = BY_GRPC_CODE[error.code];
  if (!mapped) return internalError();
  if (mapped.status >= 500) return new ApiError(mapped.status, mapped.code, publicMessage(mapped.status));

  const status = (info?.reason && STATUS_BY_REASON[info.reason]) || mapped.status;
  const details: Record<string, unknown> = Object.fromEntries(
    Object.entries(info?.metadata ?? {}).map(([key, value]) => [key, NUMERIC_METADATA.has(key) ? Number(value) : value]),
  );
  if (info && info.fieldViolations.length > 0) {
    details.fields = info.fieldViolations.map((v) => ({ field: publicFieldName(v.field), reason: v.reason, message: v.description }));
  }
  return new ApiError(status, info?.reason || mapped.code, error.rawMessage, Object.keys(details).length > 0 ? details : undefined);
}

function publicMessage(status: number): string {
  switch (status) {
    case 501:
      return "This operation is not available yet.";
    case 503:
      return "A backing service is unavailable; retry shortly.";
    case 504:
      return "A backing service did not answer in time; retry shortly.";
    default:
      return "Something went wrong on our side; the request id identifies it in our logs.";
  }
}

/** The error for anything unexpected. */
export function internalError(): ApiError {
  return new ApiError(500, "internal_error", publicMessage(500));
}
