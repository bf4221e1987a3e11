import { Code, type ConnectError } from "@connectrpc/connect";
import { errorInfoOf } from "@qrplatform/platform";

/** Exit codes: 1 when the platform refused or could not be reached, 2 when qrctl was called wrongly or has no credential. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A failure qrctl explains in one line and exits with, without a stack trace. */
export class CliError extends Error {
  override name = "CliError";
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
  }
}

/** A bad argument or a missing credential: nothing was sent to the platform. */
export const usageError = (message: string) => new CliError(message, EXIT_USAGE);

/** An RPC failed; keeps the address so a connection problem can name it. */
export class RpcFailure extends Error {
  override name = "RpcFailure";
  constructor(
    readonly address: string,
    readonly error: ConnectError,
  ) {
    super(error.message, { cause: error });
  }
}

/** PermissionDenied -> PERMISSION_DENIED, the spelling gRPC documentation and other tools use. */
function codeName(code: Code): string {
  return (Code[code] ?? String(code)).replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

function hasCause(error: unknown, code: string): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    if ((e as NodeJS.ErrnoException).code === code) return true;
  }
  return false;
}

/** One line that says what went wrong, with the gRPC code and the platform's stable reason. */
export function describeRpcFailure({ address, error }: RpcFailure): string {
  if (hasCause(error, "ECONNREFUSED")) {
    return `cannot reach the platform at ${address} (connection refused); start it with \`npm start\` or check --address`;
  }
  if (error.code === Code.Unavailable) return `cannot reach the platform at ${address}: ${error.rawMessage}`;
  if (error.code === Code.DeadlineExceeded) return `the platform at ${address} did not answer in time`;
  // A service at the address, but not the one asked for: usually one address given for services that listen apart.
  if (error.code === Code.Unimplemented) {
    return `the service at ${address} does not answer this call (${error.rawMessage}, UNIMPLEMENTED); check --tenancy-address and --links-address`;
  }

  const info = errorInfoOf(error);
  const fields = (info?.fieldViolations ?? []).map((v) => `${v.field}: ${v.description}`);
  const detail = [codeName(error.code), info?.reason ? `reason ${info.reason}` : ""].filter(Boolean).join(", ");
  // The platform's message already says what is wrong; for a rejected token, say where it came from.
  const hint = error.code === Code.Unauthenticated ? "; check --token, QRCTL_TOKEN or admin.json" : "";
  return `${[error.rawMessage, fields.join("; ")].filter(Boolean).join(" ")} (${detail})${hint}`;
}
