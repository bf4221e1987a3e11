import { describe, expect, it } from "vitest";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { TenancyService } from "@qrplatform/api/tenancy";
import { Code, ConnectError, notFound, serviceError } from "@qrplatform/platform";
import { registerDomain } from "../src/domains/registration.js";
import { FakeDomainService } from "./support/fake-domain-service.js";
import { ACCOUNT, OTHER_ACCOUNT } from "./support/objects.js";

const accounts = createClient(
  TenancyService,
  createRouterTransport((router) =>
    router.service(TenancyService, {
      getAccount: (req) => {
        if (req.accountId !== ACCOUNT) throw notFound("account");
        return { account: { id: ACCOUNT, name: "Acme" } };
      },
    }),
  ),
);

describe("registering a CR's hostname", () => {
  it("registers it for the account", async () => {
    const service = new FakeDomainService();
    const outcome = await registerDomain(
      { domains: service.client(), accounts },
      { accountId: ACCOUNT, hostname: "go.example.com" },
    );
    expect("domain" in outcome && outcome.domain.hostname).toBe("go.example.com");
  });

  it("turns the platform's refusals into the condition reasons", async () => {
    const service = new FakeDomainService();
    service.register(OTHER_ACCOUNT, "taken.example.com");
    const clients = { domains: service.client(), accounts };
    expect(await registerDomain(clients, { accountId: ACCOUNT, hostname: "10.0.0.1" })).toEqual({
      refused: {
        reason: "InvalidHostname",
        message: "The platform refuses the hostname 10.0.0.1: it must be a DNS name, not an IP address.",
        retry: false,
      },
    });
    expect(await registerDomain(clients, { accountId: ACCOUNT, hostname: "example.test" })).toMatchObject({
      refused: { reason: "InvalidHostname" },
    });
    expect(await registerDomain(clients, { accountId: ACCOUNT, hostname: "taken.example.com" })).toMatchObject({
      refused: { reason: "HostnameTaken" },
    });
    expect(await registerDomain(clients, { accountId: OTHER_ACCOUNT, hostname: "new.example.com" })).toMatchObject({
      refused: { reason: "AccountNotFound", message: `The account ${OTHER_ACCOUNT} does not exist.` },
    });
    expect(service.callsOf("createDomain").map((call) => (call as { hostname: string }).hostname)).not.toContain(
      "new.example.com",
    );
  });

  it("throws what is not the platform's answer, for the queue to retry", async () => {
    const service = new FakeDomainService();
    service.failures.push({
      method: "createDomain",
      error: serviceError(Code.Unavailable, "unavailable", "links is down"),
    });
    const failure = await registerDomain(
      { domains: service.client() },
      { accountId: ACCOUNT, hostname: "go.example.com" },
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConnectError);
    expect((failure as ConnectError).code).toBe(Code.Unavailable);
  });
});
