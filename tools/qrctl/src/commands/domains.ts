import { Option, type Command } from "commander";
import { DomainService, DomainState, DomainStateSchema, type Domain, type DomainServing } from "@qrplatform/api/links";
import { TenancyService } from "@qrplatform/api/tenancy";
import { pageSizeArg } from "../args.js";
import { CliError } from "../errors.js";
import { emit, fields, isoTime, shortTime, table, tokenOf } from "../output.js";
import { callService, present } from "../session.js";

// The admin credential may leave account_id empty on DomainService: `verify` and `remove` name a
// domain by its id alone, and `list` without --account lists every account's domains.

/** What the domain operator last reported, as --json prints it in the REST API's words; null when it never has. */
function servingJson(serving: DomainServing | undefined) {
  if (!serving) return null;
  return {
    status: servingStatus(serving),
    route_admitted: serving.routeAdmitted,
    certificate_ready: serving.certificateReady,
    certificate_expires_at: isoTime(serving.certificateExpireTime),
    reason: serving.reason,
    message: serving.message || null,
    reported_at: isoTime(serving.reportTime),
  };
}

/** The serving status as the REST API's `serving.status` words it. */
function servingStatus(serving: DomainServing): "serving" | "not_serving" {
  return serving.serving ? "serving" : "not_serving";
}

/** The serving status in one table cell: "serving", "not_serving (Reason)", or "-" when never reported. */
function servingCell(serving: DomainServing | undefined): string {
  if (!serving) return "-";
  return serving.serving ? servingStatus(serving) : `${servingStatus(serving)} (${serving.reason})`;
}

/** A domain as --json prints it: the REST API's Domain, with the fields only an operator sees. */
export function domainJson(domain: Domain) {
  return {
    id: domain.id,
    account_id: domain.accountId,
    hostname: domain.hostname,
    status: tokenOf(DomainStateSchema, domain.state),
    verification: { type: "TXT", name: domain.challengeRecordName, value: domain.challengeRecordValue },
    failure_reason: domain.failureReason || null,
    created_at: isoTime(domain.createTime),
    updated_at: isoTime(domain.updateTime),
    verified_at: isoTime(domain.verifyTime),
    last_checked_at: isoTime(domain.lastCheckTime),
    serving: servingJson(domain.serving),
  };
}

function domainText(heading: string, domain: Domain): string {
  const json = domainJson(domain);
  return `${heading}\n${fields([
    ["ID", json.id],
    ["Hostname", json.hostname],
    ["Account", json.account_id],
    ["Status", json.status],
    ...(json.failure_reason ? ([["Failure", json.failure_reason]] as const) : []),
    ["TXT name", json.verification.name],
    ["TXT value", json.verification.value],
    ["Created", shortTime(domain.createTime)],
    ["Verified", shortTime(domain.verifyTime)],
    ["Last check", shortTime(domain.lastCheckTime, "never")],
    ["Serving", domain.serving ? servingCell(domain.serving) : "not reported"],
    ...(domain.serving
      ? ([
          ["Route", domain.serving.routeAdmitted ? "admitted" : "not admitted"],
          [
            "Certificate",
            domain.serving.certificateReady
              ? `ready, expires ${shortTime(domain.serving.certificateExpireTime)}`
              : "not ready",
          ],
          ...(domain.serving.message ? ([["Why", domain.serving.message]] as const) : []),
          ["Reported", shortTime(domain.serving.reportTime)],
        ] as const)
      : []),
  ])}`;
}

/** `qrctl domains ...`: custom domains for vanity links, of any account. */
export function registerDomains(program: Command): void {
  const domains = program.command("domains").description("register, verify, list and remove custom domains");

  domains
    .command("add")
    .description("register a hostname for an account and print the DNS TXT record that proves control of it")
    .requiredOption("--account <account-id>", "the account the domain belongs to")
    .requiredOption("--hostname <hostname>", "the hostname, such as go.example.com")
    .action(async (options: { account: string; hostname: string }, command: Command) => {
      // The links service cannot see accounts, so make sure this one exists before registering for it.
      await callService(command, TenancyService, (tenancy) => tenancy.getAccount({ accountId: options.account }));
      const response = await callService(command, DomainService, (service) =>
        service.createDomain({ accountId: options.account, hostname: options.hostname }),
      );
      const domain = present(response.domain, "domain");
      emit(command, domainJson(domain), () =>
        [
          domainText("Registered domain", domain),
          "",
          `Create this DNS TXT record, then run \`qrctl domains verify ${domain.id}\`:`,
          `  ${domain.challengeRecordName}  TXT  "${domain.challengeRecordValue}"`,
        ].join("\n"),
      );
    });

  domains
    .command("list")
    .description("list domains, of one account or of every account, oldest first")
    .option("--account <account-id>", "only this account's domains (default: every account)")
    .addOption(
      new Option("--page-size <count>", "domains fetched per request, 1 to 100").argParser(pageSizeArg).default(100),
    )
    .action(async (options: { account?: string; pageSize: number }, command: Command) => {
      const all = await callService(command, DomainService, async (service) => {
        const found: Domain[] = [];
        let pageToken = "";
        do {
          const page = await service.listDomains({
            accountId: options.account ?? "",
            pageSize: options.pageSize,
            pageToken,
          });
          found.push(...page.domains);
          pageToken = page.nextPageToken;
        } while (pageToken);
        return found;
      });
      emit(command, { domains: all.map(domainJson) }, () =>
        all.length === 0
          ? options.account
            ? `No domains for account ${options.account}.`
            : "No domains."
          : table(
              ["ID", "HOSTNAME", "ACCOUNT", "STATUS", "SERVING", "CREATED", "VERIFIED"],
              all.map((d) => [
                d.id,
                d.hostname,
                d.accountId,
                tokenOf(DomainStateSchema, d.state),
                servingCell(d.serving),
                shortTime(d.createTime),
                shortTime(d.verifyTime),
              ]),
            ),
      );
    });

  domains
    .command("verify")
    .description("look the domain's TXT challenge up in DNS now; exits 1 when the domain is not verified afterwards")
    .argument("<domain-id>", "the domain's id")
    .action(async (domainId: string, _options: object, command: Command) => {
      const response = await callService(command, DomainService, (service) =>
        service.verifyDomain({ accountId: "", domainId }),
      );
      const domain = present(response.domain, "domain");
      const verified = domain.state === DomainState.VERIFIED;
      emit(command, domainJson(domain), () => domainText(verified ? "Domain verified" : "Domain not verified", domain));
      if (!verified)
        throw new CliError(
          `${domain.hostname} is not verified: ${domain.failureReason || "the challenge was not found"}`,
        );
    });

  domains
    .command("remove")
    .description("remove a domain that no live QR code uses; its hostname can then be registered again")
    .argument("<domain-id>", "the domain's id")
    .action(async (domainId: string, _options: object, command: Command) => {
      const domain = await callService(command, DomainService, async (service) => {
        const found = present((await service.getDomain({ accountId: "", domainId })).domain, "domain");
        await service.deleteDomain({ accountId: "", domainId });
        return found;
      });
      emit(
        command,
        { id: domain.id, hostname: domain.hostname, account_id: domain.accountId, removed: true },
        () => `Removed domain ${domain.id} (${domain.hostname}) of account ${domain.accountId}.`,
      );
    });
}
