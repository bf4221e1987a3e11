// A CustomDomain created with kubectl is a registration request: the hostname is registered for the
// account through DomainService.CreateDomain, exactly as `qrctl domains add` would. The platform's
// refusals become the CR's condition reasons; any other failure is for the work queue to retry.
import type { Domain } from "@qrplatform/api/links";
import { Code, ConnectError, errorInfoOf } from "@qrplatform/platform";
import type { RegistrationOutcome } from "../reconcile/policy.js";
import type { AccountClient, DomainClient } from "./client.js";

/** The registered domain, or the platform's refusal. Throws when the platform could not answer. */
export async function registerDomain(
  clients: { domains: DomainClient; accounts?: AccountClient | undefined },
  request: { accountId: string; hostname: string },
): Promise<{ domain: Domain } | { refused: RegistrationOutcome }> {
  const refused = (reason: RegistrationOutcome["reason"], message: string) => ({
    refused: { reason, message, retry: false },
  });
  if (clients.accounts) {
    // The links service cannot see accounts, so the operator asks tenancy first, as qrctl does.
    try {
      await clients.accounts.getAccount({ accountId: request.accountId });
    } catch (error) {
      if (ConnectError.from(error).code === Code.NotFound)
        return refused("AccountNotFound", `The account ${request.accountId} does not exist.`);
      throw error;
    }
  }
  try {
    const response = await clients.domains.createDomain(request);
    if (!response.domain) throw new Error("CreateDomain answered without a domain");
    return { domain: response.domain };
  } catch (error) {
    const failure = ConnectError.from(error);
    const info = errorInfoOf(failure);
    switch (failure.code) {
      case Code.InvalidArgument: {
        const problems = info?.fieldViolations ?? [];
        const account = problems.find((problem) => problem.field === "account_id");
        if (account) return refused("AccountNotFound", `The account id ${request.accountId} ${account.description}.`);
        const hostname = problems.find((problem) => problem.field === "hostname");
        return refused(
          "InvalidHostname",
          `The platform refuses the hostname ${request.hostname}: it ${hostname?.description ?? failure.rawMessage}.`,
        );
      }
      case Code.AlreadyExists:
        return refused("HostnameTaken", `The hostname ${request.hostname} is already registered.`);
      case Code.NotFound:
        return refused("AccountNotFound", `The account ${request.accountId} does not exist.`);
      default:
        throw failure;
    }
  }
}
