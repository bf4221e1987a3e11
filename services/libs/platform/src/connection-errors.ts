/**
 * Node's error codes for a connection that could not be made or was lost: refused, reset, aborted or
 * broken, timed out, unroutable, or a host name that did not resolve. The peer is down, restarting or
 * out of reach; whatever was asked of it may be asked again later. One list for every client we run
 * (gRPC to other services, node-postgres to the database).
 */
export const CONNECTION_ERROR_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
