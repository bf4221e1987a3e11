import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { ErrorInfoSchema, type ErrorInfo } from "@qrplatform/api/common";

export { Code, ConnectError } from "@connectrpc/connect";

/**
 * One invalid field of a request: the one field-problem type of every door. It has the shape of the
 * proto `FieldViolation` that services send in their errors' ErrorInfo; the REST edge writes it in
 * the public envelope as `{field, reason, message}` (the contract's name for the description).
 */
export interface FieldProblem {
  /** The field path as the caller named it, such as "name" or "design.frame.color" (see field-paths.ts). */
  field: string;
  /** A stable snake_case reason, such as "too_long". */
  reason: string;
  /** A human-readable explanation. */
  description: string;
}

/**
 * The most field problems one error lists. The rest are counted in the ErrorInfo metadata
 * `omitted_fields`, so a request with a hundred thousand bad elements gets an error of a few
 * kilobytes, not an echo of itself.
 */
export const MAX_FIELD_PROBLEMS = 20;

/**
 * The first MAX_FIELD_PROBLEMS of `fields`, and how many are left out in all: those cut here plus
 * the `omitted` an earlier door already counted.
 */
export function boundedFields<T>(fields: readonly T[], omitted = 0): { shown: T[]; omitted: number } {
  return {
    shown: fields.slice(0, MAX_FIELD_PROBLEMS),
    omitted: omitted + Math.max(0, fields.length - MAX_FIELD_PROBLEMS),
  };
}

/**
 * Builds the typed error every service throws: a gRPC code, a stable reason carried as an
 * ErrorInfo detail, and an actionable message. Internals belong in `cause`, never in the message.
 */
export function serviceError(
  code: Code,
  reason: string,
  message: string,
  extra: { metadata?: Record<string, string>; fields?: FieldProblem[]; cause?: unknown } = {},
): ConnectError {
  const { shown, omitted } = boundedFields(extra.fields ?? []);
  const info = create(ErrorInfoSchema, {
    reason,
    metadata: { ...extra.metadata, ...(omitted > 0 && { omitted_fields: String(omitted) }) },
    fieldViolations: shown,
  });
  return new ConnectError(message, code, undefined, [{ desc: ErrorInfoSchema, value: info }], extra.cause);
}

/** The resource does not exist in the caller's account; the same error whether it exists elsewhere or not. */
export function notFound(resource: string): ConnectError {
  return serviceError(Code.NotFound, "not_found", `The ${resource} was not found.`, { metadata: { resource } });
}

/** The request's content is invalid; each problem names its field. */
export function invalidArgument(fields: FieldProblem[], message = "The request is not valid."): ConnectError {
  return serviceError(Code.InvalidArgument, "validation_error", message, { fields });
}

/** Reads the ErrorInfo detail of an error from any qrplatform service, if it has one. */
export function errorInfoOf(error: ConnectError): ErrorInfo | undefined {
  return error.findDetails(ErrorInfoSchema)[0];
}
