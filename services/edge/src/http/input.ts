import type { Request } from "express";
import type { z } from "zod";
import { ApiError, type FieldDetail } from "./api-error.js";

/** zod's problems as public field details; unknown keys become one `unknown_field` each. */
function fieldDetailsOf(error: z.ZodError, prefix: string[] = []): FieldDetail[] {
  return error.issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path.map(String)];
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        field: [...path, key].join("."),
        reason: "unknown_field",
        message: "is not a field of this request; read-only and unknown fields cannot be sent",
      }));
    }
    return [{ field: path.join(".") || "(body)", reason: issue.code, message: issue.message }];
  });
}

/** Parses a value with a zod schema, or throws 400 `validation_error` naming every invalid field. */
export function parseInput<Schema extends z.ZodType>(schema: Schema, value: unknown): z.infer<Schema> {
  const result = schema.safeParse(value);
  if (!result.success) throw ApiError.validation(fieldDetailsOf(result.error));
  return result.data;
}

/** The JSON body of a POST or PATCH; a body of any other content type is 415. */
export function jsonBody(req: Request): unknown {
  const isJson = req.is("application/json");
  // No body at all reads as an empty object, so the problems name the missing fields.
  if (isJson === null) return {};
  if (!isJson) {
    throw new ApiError(415, "unsupported_media_type", "Send the request body as JSON with `Content-Type: application/json`.");
  }
  return req.body;
}
