import { boundedFields, type FieldProblem } from "@qrplatform/platform";

/**
 * An error the edge answers with: an HTTP status and the public envelope's stable `code`, message and
 * optional details. Route handlers throw these; the error handler writes them.
 */
export class ApiError extends Error {
  override name = "ApiError";

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  /**
   * 400 `validation_error` listing at most MAX_FIELD_PROBLEMS fields; how many more there were is
   * `details.omitted_fields`, so the error stays small however much of the request is wrong.
   */
  static validation(
    fields: FieldProblem[],
    message = "The request is not valid; see details.fields.",
    omitted = 0,
  ): ApiError {
    return new ApiError(400, "validation_error", message, fieldDetails(fields, omitted));
  }

  static notFound(resource: string): ApiError {
    return new ApiError(404, "not_found", `The ${resource} was not found.`, { resource });
  }
}

/**
 * The `details` of a validation error as the contract writes them: at most MAX_FIELD_PROBLEMS field
 * problems as `{field, reason, message}` (the envelope's name for a problem's description), and how
 * many were left out (beyond the `omitted` a service already counted) as `omitted_fields`, present only
 * when some were. Field paths are written as given: public already, or made so by the caller.
 */
export function fieldDetails(fields: readonly FieldProblem[], omitted = 0) {
  const bounded = boundedFields(fields, omitted);
  return {
    fields: bounded.shown.map(({ field, reason, description }) => ({ field, reason, message: description })),
    ...(bounded.omitted > 0 && { omitted_fields: bounded.omitted }),
  };
}
