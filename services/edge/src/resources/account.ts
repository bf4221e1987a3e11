import type { Client } from "@connectrpc/connect";
import type { RequestHandler } from "express";
import type { QrCodeService } from "@qrplatform/api/catalog";
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

/** The public Account: the contract's fields plus add-ons, the limits that apply to it and its use of them. */
export function accountJson(
  account: Account,
  plan: Plan,
  hourlyRequestLimit: bigint | undefined,
  usage: { qrCodes: bigint },
) {
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
    usage: { qr_codes: Number(usage.qrCodes) },
    created_at: dateTime(account.createTime),
    updated_at: dateTime(account.updateTime),
  };
}

/**
 * GET /account: the key's account, as tenancy returned it while authenticating this very request, with
 * how many QR codes it holds against `limits.qr_codes`, counted by the catalog as a create counts them.
 */
export function getAccountHandler(qrCodes: Client<typeof QrCodeService>): RequestHandler {
  return async (_req, res) => {
    const caller = callerOf(res);
    const { capacity } = await qrCodes.getCapacity({ accountId: caller.accountId });
    res.json(
      accountJson(caller.account, caller.plan, caller.hourlyRequestLimit, { qrCodes: capacity?.qrCodesUsed ?? 0n }),
    );
  };
}
