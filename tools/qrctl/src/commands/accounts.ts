import { Option, type Command } from "commander";
import {
  AddonSchema,
  SubscriptionStatusSchema,
  SubscriptionTierSchema,
  TenancyAdminService,
  type Account,
  type Addon,
  type SubscriptionStatus,
  type SubscriptionTier,
} from "@qrplatform/api/tenancy";
import { countArg, enumArg, enumListArg, pageSizeArg, tokensOf } from "../args.js";
import { usageError } from "../errors.js";
import { emit, fields, isoTime, optionalNumber, shortTime, table, tokenOf } from "../output.js";
import { callService, present } from "../session.js";

/** The account as --json prints it: snake_case fields, enum values as lowercase tokens. */
export function accountJson(account: Account) {
  return {
    id: account.id,
    name: account.name,
    slug: account.slug,
    subscription_tier: tokenOf(SubscriptionTierSchema, account.subscriptionTier),
    subscription_status: tokenOf(SubscriptionStatusSchema, account.subscriptionStatus),
    addons: account.addons.map((addon) => tokenOf(AddonSchema, addon)),
    hourly_request_limit_override: optionalNumber(account.hourlyRequestLimitOverride),
    created_at: isoTime(account.createTime),
    updated_at: isoTime(account.updateTime),
  };
}

function accountText(heading: string, account: Account): string {
  const json = accountJson(account);
  return `${heading}\n${fields([
    ["ID", json.id],
    ["Name", json.name],
    ["Slug", json.slug],
    ["Plan", json.subscription_tier],
    ["Status", json.subscription_status],
    ["Add-ons", json.addons.join(", ") || "none"],
    [
      "Hourly limit",
      json.hourly_request_limit_override === null ? "plan default" : String(json.hourly_request_limit_override),
    ],
    ["Created", shortTime(account.createTime)],
    ["Updated", shortTime(account.updateTime)],
  ])}`;
}

interface UpdateOptions {
  name?: string;
  plan?: SubscriptionTier;
  status?: SubscriptionStatus;
  addon?: Addon[];
  removeAddon?: Addon[];
  hourlyLimit?: bigint;
  clearHourlyLimit?: boolean;
}

/** `qrctl accounts ...`: accounts are the tenants; everything else belongs to one. */
export function registerAccounts(program: Command): void {
  const accounts = program.command("accounts").description("create, change and list accounts");

  accounts
    .command("create")
    .description("create an account on a plan")
    .requiredOption("--name <name>", "display name, 1 to 100 characters")
    .requiredOption(
      "--plan <plan>",
      `plan: ${tokensOf(SubscriptionTierSchema)}`,
      enumArg(SubscriptionTierSchema, "plan"),
    )
    .option(
      "--status <status>",
      `starting status: ${tokensOf(SubscriptionStatusSchema)} (default: active)`,
      enumArg(SubscriptionStatusSchema, "status"),
    )
    .action(
      async (options: { name: string; plan: SubscriptionTier; status?: SubscriptionStatus }, command: Command) => {
        const response = await callService(command, TenancyAdminService, (admin) =>
          admin.createAccount({
            name: options.name,
            subscriptionTier: options.plan,
            subscriptionStatus: options.status,
          }),
        );
        const account = present(response.account, "account");
        emit(command, accountJson(account), () => accountText("Created account", account));
      },
    );

  accounts
    .command("update")
    .description("change an account; what is not given stays as it is")
    .argument("<account-id>", "the account's id")
    .option("--name <name>", "new display name")
    .option("--plan <plan>", `new plan: ${tokensOf(SubscriptionTierSchema)}`, enumArg(SubscriptionTierSchema, "plan"))
    .option(
      "--status <status>",
      `new status: ${tokensOf(SubscriptionStatusSchema)}`,
      enumArg(SubscriptionStatusSchema, "status"),
    )
    .option(
      "--addon <addon>",
      `enable an add-on (${tokensOf(AddonSchema)}); repeatable`,
      enumListArg(AddonSchema, "add-on"),
    )
    .option("--remove-addon <addon>", "disable an add-on; repeatable", enumListArg(AddonSchema, "add-on"))
    .addOption(
      new Option("--hourly-limit <requests>", "hourly request limit that replaces the plan's for this account")
        .argParser(countArg)
        .conflicts("clearHourlyLimit"),
    )
    .option("--clear-hourly-limit", "drop the override so the plan's hourly limit applies again")
    .action(async (accountId: string, options: UpdateOptions, command: Command) => {
      const add = options.addon ?? [];
      const remove = options.removeAddon ?? [];
      const both = add.filter((addon) => remove.includes(addon));
      if (both.length > 0) {
        throw usageError(`--addon and --remove-addon both name ${both.map((a) => tokenOf(AddonSchema, a)).join(", ")}`);
      }
      const changes = [options.name, options.plan, options.status, options.hourlyLimit, options.clearHourlyLimit];
      if (add.length === 0 && remove.length === 0 && changes.every((c) => c === undefined)) {
        throw usageError(
          "nothing to change: give at least one of --name, --plan, --status, --addon, --remove-addon, --hourly-limit, --clear-hourly-limit",
        );
      }
      const response = await callService(command, TenancyAdminService, (admin) =>
        admin.updateAccount({
          accountId,
          name: options.name,
          subscriptionTier: options.plan,
          subscriptionStatus: options.status,
          addAddons: add,
          removeAddons: remove,
          hourlyRequestLimitOverride: options.hourlyLimit,
          clearHourlyRequestLimitOverride: options.clearHourlyLimit === true,
        }),
      );
      const account = present(response.account, "account");
      emit(command, accountJson(account), () => accountText("Updated account", account));
    });

  accounts
    .command("list")
    .description("list every account, oldest first")
    .addOption(
      new Option("--page-size <count>", "accounts fetched per request, 1 to 100").argParser(pageSizeArg).default(100),
    )
    .action(async (options: { pageSize: number }, command: Command) => {
      // The API returns one page at a time; follow the tokens so the listing is complete.
      const all = await callService(command, TenancyAdminService, async (admin) => {
        const found: Account[] = [];
        let pageToken = "";
        do {
          const page = await admin.listAccounts({ pageSize: options.pageSize, pageToken });
          found.push(...page.accounts);
          pageToken = page.nextPageToken;
        } while (pageToken);
        return found;
      });
      const rows = all.map(accountJson);
      emit(command, { accounts: rows }, () =>
        rows.length === 0
          ? "No accounts."
          : table(
              ["ID", "NAME", "SLUG", "PLAN", "STATUS", "ADD-ONS", "HOURLY LIMIT", "CREATED"],
              rows.map((a, i) => [
                a.id,
                a.name,
                a.slug,
                a.subscription_tier,
                a.subscription_status,
                a.addons.join(",") || "-",
                a.hourly_request_limit_override === null ? "plan" : String(a.hourly_request_limit_override),
                shortTime(all[i]?.createTime),
              ]),
            ),
      );
    });
}
