import { ConnectError } from "@connectrpc/connect";
import type { ErrorRequestHandler, RequestHandler, Response } from "express";
import type { Logger } from "pino";
import { ApiError } from "./api-error.js";
import { apiErrorFromGrpc, internalError } from "./grpc-errors.js";
import { requestIdOf } from "./request-id.js";

/** Writes the public error envelope: `{"error": {"code", "message", "details"?, "request_id"}}`. */
export function sendError(res: Response, error: ApiError): void {
  const requestId = requestIdOf(res.req, res);
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json({
    error: {
      code: error.code,
      message: error.message,
      ...(error.details && { details: error.details }),
      request_id: requestId,
    },
  });
}

/** What express's body parser reports, by its error `type`. */
function apiErrorFromBodyParser(error: { type?: string; limit?: number }): ApiError | undefined {
  switch (error.type) {
    case "entity.parse.failed":
      return new ApiError(400, "invalid_json", "The request body is not valid JSON.");
    case "entity.too.large":
      return new ApiError(413, "payload_too_large", `The request body is larger than ${error.limit} bytes.`);
    case "request.size.invalid":
      return new ApiError(400, "invalid_json", "The request body is not as long as its Content-Length says.");
    case "encoding.unsupported":
      return new ApiError(
        415,
        "unsupported_media_type",
        "Send the body uncompressed, or with one Content-Encoding of gzip, deflate, br or zstd.",
      );
    case "charset.unsupported":
      return new ApiError(415, "unsupported_media_type", "Send the body as UTF-8 JSON.");
    default:
      return undefined;
  }
}

/** What an error thrown while serving a request answers: ApiErrors as they are, service errors through the gRPC mapping, body-parser errors by type, anything else a 500. */
export function apiErrorOf(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ConnectError) return apiErrorFromGrpc(error);
  return apiErrorFromBodyParser(error as { type?: string }) ?? internalError();
}

/**
 * The one place errors become responses, through apiErrorOf; a 5xx is logged with its cause.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error);
    const apiError = apiErrorOf(error);

    if (apiError.status >= 500) {
      logger.error(
        { err: error, requestId: requestIdOf(req, res), method: req.method, url: req.originalUrl },
        "request failed",
      );
    }
    sendError(res, apiError);
  };
}

/** The 404 for paths no route serves. */
export const routeNotFound: RequestHandler = (req) => {
  throw new ApiError(404, "route_not_found", `There is no ${req.method} ${req.path} in this API.`);
};

/**
 * The 405 for a known path with a method it does not serve; the `Allow` header lists the methods it
 * does. OPTIONS answers 204 with the same header.
 */
export function methodNotAllowed(allowed: readonly string[]): RequestHandler {
  const allow = [
    ...new Set([...allowed.map((m) => m.toUpperCase()), ...(allowed.includes("get") ? ["HEAD"] : []), "OPTIONS"]),
  ].join(", ");
  return (req, res) => {
    res.setHeader("Allow", allow);
    if (req.method === "OPTIONS") {
      res.status(204).end();
      return;
    }
    throw new ApiError(405, "method_not_allowed", `${req.method} is not allowed on ${req.path}; use ${allow}.`);
  };
}
