import type { RequestHandler } from "express";
import {
  AddonSchema,
  SubscriptionStatusSchema,
  SubscriptionTierSchema,
  type Account,
  type Plan,
} from "@qrplatform/api/tenancy";
import { enumToken } from "@qrplatform/platform";
import { callerOf } from "../http/auth.js";
import { dateTime, optionalCount } from "./json.js";

/** The public Account: the contract's fields plus add-ons and the limits that apply to it. */
export function accountJson(account: Account, plan: Plan, hourlyRequestLimit: bigint | undefined) {
  return {
    id: account.id,
    name: account.name,
    slug: account.slug,
    subscription_tier: enumToken(SubscriptionTierSchema, account.subscriptionTier),
    subscription_status: enumToken(SubscriptionStatusSchema, account.subscriptionStatus),
    addons: account.addons.map((addon) => enumToken(AddonSchema, addon)),
    limits: {
      qr_codes: optionalCount(plan.qrCodeCapacity),
      custom_links: optionalCount(plan.customLinkCapacity),
      hourly_requests: optionalCount(hourlyRequestLimit),
    },
    created_at: dateTime(account.createTime),
    updated_at: dateTime(account.updateTime),
  };
}

/** GET /account: the key's account, as tenancy returned it while authenticating this very request. */
export const getAccount: RequestHandler = (_req, res) => {
  const caller = callerOf(res);
  res.json(accountJson(caller.account, caller.plan, caller.hourlyRequestLimit));
};
