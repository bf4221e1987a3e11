import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/** A client's own request id is kept when it is short and plain, so it can be traced end to end. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The id of a request: the client's `X-Request-ID` when acceptable, else a new one. It is echoed in the
 * `X-Request-ID` response header of every response and in every error body and log line.
 */
export function requestIdOf(req: IncomingMessage, res: ServerResponse): string {
  const existing = res.getHeader("x-request-id");
  if (typeof existing === "string") return existing;
  const offered = req.headers["x-request-id"];
  const id =
    typeof offered === "string" && CLIENT_REQUEST_ID.test(offered)
      ? offered
      : `req_${randomUUID().replaceAll("-", "")}`;
  res.setHeader("X-Request-ID", id);
  return id;
}
