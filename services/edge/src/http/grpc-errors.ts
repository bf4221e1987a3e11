import { Code, type ConnectError } from "@connectrpc/connect";
import { errorInfoOf, isTransportFailure, publicFieldPath } from "@qrplatform/platform";
import { ApiError, fieldDetails } from "./api-error.js";

/**
 * Seconds a client is told to wait (`Retry-After`) before retrying a transient failure: a backing service
 * that is down, restarting or overloaded, or that did not answer in time. Long enough for a restarted
 * service to listen again, short enough that a client does not give up on a blip.
 */
export const RETRY_AFTER_SECONDS = 5;

/** What a known reason becomes: its HTTP status, and after how many seconds the client may retry. */
interface ReasonOutcome {
  status: number;
  retryAfterSeconds?: number;
  headers?: Record<string, string>;
}

/**
 * Reasons only internal callers can meet: no public request can cause them, so at the edge they are
 * a failure of ours (500) like any unknown reason. `link_exists`: a link id the catalog chose is taken.
 * `idempotency_claim_lost`: the edge stored an answer under an Idempotency-Key claim it no longer held.
 */
export const INTERNAL_REASONS: ReadonlySet<string> = new Set(["link_exists", "idempotency_claim_lost"]);

/**
 * Every reason a service answers with, under the gRPC code it comes with. Only these reach the client
 * as themselves: the reason becomes the public `code` and the service's message (written for people)
 * is kept. A code with a reason missing here is a bug or a failure of ours, never the client's to act
 * on, so it never surfaces as a 4xx. A plan capacity is RESOURCE_EXHAUSTED inside but 403 outside:
 * retrying will not help. A full render queue frees a place as soon as one render is drawn: about a second.
 */
export const KNOWN_REASONS: Partial<Record<Code, Record<string, ReasonOutcome>>> = {
  [Code.InvalidArgument]: { validation_error: { status: 400 } },
  [Code.NotFound]: { not_found: { status: 404 } },
  [Code.Unauthenticated]: {
    invalid_api_key: { status: 401, headers: { "WWW-Authenticate": 'Bearer error="invalid_token"' } },
  },
  [Code.PermissionDenied]: { premium_frames_required: { status: 403 } },
  [Code.AlreadyExists]: { slug_taken: { status: 409 }, domain_taken: { status: 409 } },
  // A create that repeats an Idempotency-Key reaches the catalog only when the edge lost the first answer (ADR 0016).
  [Code.Aborted]: {
    slug_conflict: { status: 409 },
    idempotency_key_in_progress: { status: 409, retryAfterSeconds: 1 },
  },
  [Code.FailedPrecondition]: {
    domain_not_verified: { status: 409 },
    domain_in_use: { status: 409 },
    workspace_not_empty: { status: 409 },
    idempotency_key_reused: { status: 422 },
  },
  [Code.ResourceExhausted]: {
    qr_code_limit_reached: { status: 403 },
    link_limit_reached: { status: 403 },
    webhook_endpoint_limit_reached: { status: 403 },
    render_queue_full: { status: 429, retryAfterSeconds: 1 },
  },
};

/**
 * Codes that mean "not now" whatever their reason (UNAVAILABLE with `database_unavailable` or
 * `dns_unavailable` included): a service that is down or restarting, a connection lost mid-call, a
 * transaction aborted for a reason we do not know (a retry may well succeed), a method the service does
 * not have yet while a new version rolls out. The client gets 503 and `Retry-After`.
 */
const TRANSIENT_CODES = new Set<Code>([Code.Unavailable, Code.Canceled, Code.Aborted, Code.Unimplemented]);

/** Metadata that carries counts; ErrorInfo holds strings, the API shows numbers. */
const NUMERIC_METADATA = new Set(["limit", "used", "omitted_fields", "qr_code_count"]);

/**
 * Turns a service's error into the public error: a known reason becomes the code with the service's
 * message, metadata becomes `details` and field violations `details.fields`. Everything else is told
 * apart only by what the caller may do about it: retry shortly (503, or 504 for a deadline, both with
 * `Retry-After`) or report it (500). Those messages are generic; the caller logs the original.
 */
export function apiErrorFromGrpc(error: ConnectError): ApiError {
  const info = errorInfoOf(error);
  const known = info && KNOWN_REASONS[error.code]?.[info.reason];
  if (!info || !known) {
    if (TRANSIENT_CODES.has(error.code) || isTransportFailure(error)) return serviceUnavailable();
    if (error.code === Code.DeadlineExceeded) return retryLater(504, "upstream_timeout");
    return internalError();
  }
  const details: Record<string, unknown> = Object.fromEntries(
    Object.entries(info.metadata).map(([key, value]) => [key, NUMERIC_METADATA.has(key) ? Number(value) : value]),
  );
  if (info.fieldViolations.length > 0) {
    // Services list at most MAX_FIELD_PROBLEMS; one that lists more is cut here too, and counted.
    // They name fields by proto path; the client reads the names it sent (field-paths.ts).
    const fields = info.fieldViolations.map((v) => ({
      field: publicFieldPath(v.field),
      reason: v.reason,
      description: v.description,
    }));
    Object.assign(details, fieldDetails(fields, Number(details.omitted_fields ?? 0)));
  }
  const headers = {
    ...known.headers,
    ...(known.retryAfterSeconds && { "Retry-After": String(known.retryAfterSeconds) }),
  };
  return new ApiError(
    known.status,
    info.reason,
    error.rawMessage,
    Object.keys(details).length > 0 ? details : undefined,
    headers,
  );
}

function retryLater(status: 503 | 504, code: string): ApiError {
  return new ApiError(status, code, publicMessage(status), undefined, { "Retry-After": String(RETRY_AFTER_SECONDS) });
}

function publicMessage(status: number): string {
  switch (status) {
    case 503:
      return `A backing service is unavailable; retry in ${RETRY_AFTER_SECONDS} seconds.`;
    case 504:
      return `A backing service did not answer in time; retry in ${RETRY_AFTER_SECONDS} seconds.`;
    default:
      return "Something went wrong on our side; the request id identifies it in our logs.";
  }
}

/** The 503 for a backing service that is down, restarting or unreachable. */
function serviceUnavailable(): ApiError {
  return retryLater(503, "service_unavailable");
}

/** The error for anything unexpected. */
export function internalError(): ApiError {
  return new ApiError(500, "internal_error", publicMessage(500));
}
