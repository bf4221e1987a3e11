import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { CONNECTION_ERROR_CODES } from "../connection-errors.js";
import { observeCall } from "./call-outcome.js";

// What connect-node reports when a call never got an answer, measured against real servers that were
// killed, reset or refused (services/libs/platform/test/transport-failures.test.ts):
//   nothing listening (stopped, restarting)       Unavailable  "connect ECONNREFUSED …"      cause ECONNREFUSED
//   process killed with an idle connection open   Aborted      "read ECONNRESET"             cause ECONNRESET
//   process killed or session destroyed mid-call  Canceled     "http/2 stream closed with error code CANCEL"  no cause
//   GOAWAY with an error, RST_STREAM of any kind  Internal     "Session/Stream closed with error code …"      cause ERR_HTTP2_*
//   a proxy answering 502/503 without gRPC        Unavailable  "HTTP 503"
//   the deadline passed                           DeadlineExceeded "the operation timed out"
// Only the first and the last say what happened; the others read like a service's own answer (a
// conflict, a cancellation, a bug). They are all one thing to the caller: the service is unavailable.

/** A lost or refused connection, and the errors of an HTTP/2 stream or session that broke under a call. */
const isConnectionCode = (code: string) =>
  CONNECTION_ERROR_CODES.has(code) ||
  code === "ERR_STREAM_DESTROYED" ||
  code === "ERR_STREAM_PREMATURE_CLOSE" ||
  code.startsWith("ERR_HTTP2_");

function lostConnection(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e = error; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === "string" && isConnectionCode(code)) return true;
  }
  return false;
}

/**
 * True when a call failed because the service could not be reached or the connection broke, not
 * because the service answered with an error. A service's own answers carry an ErrorInfo detail and
 * arrive without a Node error behind them; transport failures have neither. `callerCanceled` is true
 * when the caller itself gave up, which is the one cancellation that is not a failure of the service.
 */
export function isTransportFailure(error: ConnectError, callerCanceled = false): boolean {
  if (error.details.length > 0) return false;
  if (error.code === Code.Unavailable) return true;
  if (error.code === Code.Canceled) return !callerCanceled;
  return lostConnection(error.cause);
}

/**
 * A client interceptor that reports every transport failure as UNAVAILABLE, keeping the original as
 * its cause. A service that relays an error from another service (the catalog calling links) then
 * relays the truth, and callers need one rule: UNAVAILABLE means retry later. A stream that breaks after
 * its first messages fails the same way.
 */
export function transportFailuresAsUnavailable(): Interceptor {
  return (next) => (req) =>
    observeCall(() => next(req), req.signal, {
      mapError(error) {
        const connectError = ConnectError.from(error);
        if (connectError.code === Code.Unavailable || !isTransportFailure(connectError, req.signal.aborted))
          return error;
        return new ConnectError(
          `${req.service.typeName} is unavailable: ${connectError.rawMessage}`,
          Code.Unavailable,
          connectError.metadata,
          undefined,
          connectError,
        );
      },
      settled: () => {},
    });
}
