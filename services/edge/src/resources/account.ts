import { Code, ConnectError, type Client } from "@connectrpc/connect";
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
  usage: { qrCodes: number | null },
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
    usage: { qr_codes: usage.qrCodes },
    created_at: dateTime(account.createTime),
    updated_at: dateTime(account.updateTime),
  };
}

/** How long GET /account waits for the catalog's count before answering without it. */
const USAGE_TIMEOUT_MS = 1_000;

/**
 * GET /account: the key's account, as tenancy returned it while authenticating this very request, with
 * how many QR codes it holds against `limits.qr_codes`, counted by the catalog as a create counts them.
 * The account is tenancy's: while the catalog cannot answer (down, or slower than USAGE_TIMEOUT_MS) it
 * is still served, with the count as null, so a key can be checked whatever the catalog is doing.
 */
export function getAccountHandler(qrCodes: Client<typeof QrCodeService>): RequestHandler {
  return async (_req, res) => {
    const caller = callerOf(res);
    let qrCodesUsed: number | null = null;
    try {
      const { capacity } = await qrCodes.getCapacity({ accountId: caller.accountId }, { timeoutMs: USAGE_TIMEOUT_MS });
      qrCodesUsed = Number(capacity?.qrCodesUsed ?? 0n);
    } catch (error) {
      const unavailable =
        error instanceof ConnectError && (error.code === Code.Unavailable || error.code === Code.DeadlineExceeded);
      if (!unavailable) throw error;
    }
    res.json(accountJson(caller.account, caller.plan, caller.hourlyRequestLimit, { qrCodes: qrCodesUsed }));
  };
}
