// Errors in the shape the Kubernetes API server answers with: a metav1.Status body whose `reason` and
// `code` client-node surfaces as ApiException.code and ApiException.body.

/** The metav1 Status reasons the fake answers with. */
export type StatusReason =
  | "BadRequest"
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Invalid"
  | "Expired"
  | "MethodNotAllowed"
  | "UnsupportedMediaType"
  | "NotAcceptable"
  | "TooManyRequests"
  | "InternalError"
  | "ServiceUnavailable";

/** A metav1.Status object, as the API server sends it for failures. */
export interface KubeStatus {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure";
  message: string;
  reason: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** metav1.StatusDetails: which object the failure is about, and field-level causes. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: { type: string; message: string; field?: string }[];
  retryAfterSeconds?: number;
}

const codes: Record<StatusReason, number> = {
  BadRequest: 400,
  NotAcceptable: 406,
  NotFound: 404,
  MethodNotAllowed: 405,
  AlreadyExists: 409,
  Conflict: 409,
  Expired: 410,
  UnsupportedMediaType: 415,
  Invalid: 422,
  TooManyRequests: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
};

/** A request the fake refuses; the HTTP layer turns it into a Status response with `code`. */
export class KubeError extends Error {
  readonly reason: StatusReason;
  readonly code: number;
  readonly details: StatusDetails | undefined;

  constructor(reason: StatusReason, message: string, details?: StatusDetails) {
    super(message);
    this.name = "KubeError";
    this.reason = reason;
    this.code = codes[reason];
    this.details = details;
  }

  /** The Status body for this error. */
  toStatus(): KubeStatus {
    return statusBody(this.reason, this.message, this.details);
  }
}

/** Builds a Status body; the HTTP status code follows from the reason. */
export function statusBody(reason: StatusReason, message: string, details?: StatusDetails): KubeStatus {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    ...(details ? { details } : {}),
    code: codes[reason],
  };
}
