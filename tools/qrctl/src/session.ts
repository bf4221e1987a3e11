import type { DescService } from "@bufbuild/protobuf";
import { ConnectError, createClient, type Client } from "@connectrpc/connect";
import type { Command } from "commander";
import { remoteTransport } from "@qrplatform/platform";
import { resolveCredential } from "./credentials.js";
import { CliError, RpcFailure } from "./errors.js";

/**
 * Calls one of the platform's gRPC services with the admin credential. Every command goes through
 * here, so the credential is resolved only once arguments are known to be valid, and every failure
 * carries the address it was sent to.
 */
export async function callService<S extends DescService, T>(
  command: Command,
  service: S,
  call: (client: Client<S>) => Promise<T>,
): Promise<T> {
  const credential = resolveCredential(command.optsWithGlobals<{ address?: string; token?: string }>());
  const client = createClient(service, remoteTransport({ baseUrl: credential.address, token: credential.token }));
  try {
    return await call(client);
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new RpcFailure(credential.address, ConnectError.from(error));
  }
}

/** A message field the platform always sets; its absence means a platform bug, not a user error. */
export function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new CliError(`the platform's answer has no ${what}`);
  return value;
}
