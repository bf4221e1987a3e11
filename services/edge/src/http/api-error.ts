import { MAX_FIELD_PROBLEMS } from "@qrplatform/platform";

/** One invalid input field, as the public error envelope reports it under `details.fields`. */
export interface FieldDetail {
  /** The field as the client named it: `name`, `limit`, `design.frame.color`. */
  field: string;
  /** A stable snake_case reason, such as `too_big` or `unknown_field`. */
  reason: string;
  /** What is wrong, in English. */
  message: string;
}

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
  static validation(fields: FieldDetail[], message = "The request is not valid; see details.fields.", omitted = 0): ApiError {
    return new ApiError(400, "validation_error", message, boundedFields(fields, omitted));
  }

  static notFound(resource: string): ApiError {
    return new ApiError(404, "not_found", `The ${resource} was not found.`, { resource });
  }
}

/**
 * At most MAX_FIELD_PROBLEMS of `fields`, and how many were left out (beyond the `omitted` a service
 * already counted) as `omitted_fields`, present only when some were.
 */
export function boundedFields(fields: FieldDetail[], omitted = 0): { fields: FieldDetail[]; omitted_fields?: number } {
  const rest = omitted + Math.max(0, fields.length - MAX_FIELD_PROBLEMS);
  return { fields: fields.slice(0, MAX_FIELD_PROBLEMS), ...(rest > 0 && { omitted_fields: rest }) };
}
