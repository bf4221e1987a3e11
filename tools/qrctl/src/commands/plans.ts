import type { Command } from "commander";
import { SubscriptionTierSchema, TenancyAdminService, type Plan } from "@qrplatform/api/tenancy";
import { emit, optionalNumber, table, tokenOf } from "../output.js";
import { callService } from "../session.js";

/** A plan as --json prints it; null capacities and limits mean unlimited. */
export function planJson(plan: Plan) {
  return {
    tier: tokenOf(SubscriptionTierSchema, plan.tier),
    public_api_access: plan.publicApiAccess,
    qr_code_capacity: optionalNumber(plan.qrCodeCapacity),
    custom_link_capacity: optionalNumber(plan.customLinkCapacity),
    hourly_request_limit: optionalNumber(plan.hourlyRequestLimit),
  };
}

const amount = (value: number | null) => (value === null ? "unlimited" : String(value));

/** `qrctl plans ...`: the policy table lives in the platform; qrctl only shows it. */
export function registerPlans(program: Command): void {
  const plans = program.command("plans").description("show the plans and their limits");

  plans
    .command("list")
    .description("list every plan with its capacities and hourly request limit")
    .action(async (_options: object, command: Command) => {
      const response = await callService(command, TenancyAdminService, (admin) => admin.listPlans({}));
      const rows = response.plans.map(planJson);
      emit(command, { plans: rows }, () =>
        table(
          ["PLAN", "API ACCESS", "QR CODES", "CUSTOM LINKS", "REQUESTS/HOUR"],
          rows.map((p) => [
            p.tier,
            p.public_api_access ? "yes" : "no",
            amount(p.qr_code_capacity),
            amount(p.custom_link_capacity),
            amount(p.hourly_request_limit),
          ]),
        ),
      );
    });
}
