// The operator's clients of the platform: DomainService on the links service, and (optionally)
// TenancyService to check that an account exists before registering a hostname for it. Both present
// the admin credential, as qrctl does.
import { createClient, type Client } from "@connectrpc/connect";
import { DomainService } from "@qrplatform/api/links";
import { TenancyService } from "@qrplatform/api/tenancy";
import { remoteTransport } from "@qrplatform/platform";

export type DomainClient = Client<typeof DomainService>;
export type AccountClient = Client<typeof TenancyService>;

export function domainClient(options: { baseUrl: string; token: string }): DomainClient {
  return createClient(DomainService, remoteTransport(options));
}

export function accountClient(options: { baseUrl: string; token: string }): AccountClient {
  return createClient(TenancyService, remoteTransport(options));
}
