import type { Request } from "express";
import { isUuid } from "@qrplatform/platform";
import { ApiError } from "../http/api-error.js";

/**
 * A path parameter that must be a UUID. A malformed id is a client error (400), not a missing
 * resource: it can never name anything, and saying so helps more than a 404.
 */
export function uuidParam(req: Request, name: string): string {
  const value = req.params[name];
  if (typeof value !== "string" || !isUuid(value)) {
    throw ApiError.validation([{ field: name, reason: "invalid_format", message: "must be a UUID" }]);
  }
  return value.toLowerCase();
}
