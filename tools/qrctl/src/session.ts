import type { DescService } from "@bufbuild/protobuf";
import { ConnectError, createClient, type Client } from "@connectrpc/connect";
import type { Command } from "commander";
import { remoteTransport } from "@qrplatform/platform";
import { addressOf, resolveCredential, type AdminTarget, type CredentialFlags } from "./credentials.js";
import { CliError, RpcFailure } from "./errors.js";

/** The service qrctl must reach for `service`: its proto package names it (qrplatform.links.v1.DomainService). */
function targetOf(service: DescService): AdminTarget {
  const target = service.typeName.split(".")[1];
  if (target !== "tenancy" && target !== "links")
    throw new Error(`qrctl has no address setting for ${service.typeName}`);
  return target;
}

/**
 * Calls one of the platform's gRPC services with the admin credential, at that service's address. Every command goes through
 * here, so the credential is resolved only once arguments are known to be valid, and every failure
 * carries the address it was sent to.
 */
export async function callService<S extends DescService, T>(
  command: Command,
  service: S,
  call: (client: Client<S>) => Promise<T>,
): Promise<T> {
  const credential = resolveCredential(command.optsWithGlobals<CredentialFlags>());
  const address = addressOf(credential, targetOf(service));
  const client = createClient(service, remoteTransport({ baseUrl: address, token: credential.token }));
  try {
    return await call(client);
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new RpcFailure(address, ConnectError.from(error));
  }
}

/** A message field the platform always sets; its absence means a platform bug, not a user error. */
export function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new CliError(`the platform's answer has no ${what}`);
  return value;
}
