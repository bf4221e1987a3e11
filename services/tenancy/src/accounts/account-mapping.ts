import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  AccountSchema,
  Addon,
  AddonSchema,
  PlanSchema,
  SubscriptionStatusSchema,
  SubscriptionTierSchema,
  type Account,
  type Plan,
  type SubscriptionStatus,
  type SubscriptionTier,
} from "@qrplatform/api/tenancy";
import { enumFromToken, enumToken } from "@qrplatform/platform";
import type { PlanPolicy } from "../plans/plans.js";
import type { AccountRow } from "./accounts.table.js";

export const tierToken = (tier: SubscriptionTier) => enumToken(SubscriptionTierSchema, tier);
export const statusToken = (status: SubscriptionStatus) => enumToken(SubscriptionStatusSchema, status);
export const addonToken = (addon: Addon) => enumToken(AddonSchema, addon);

export function tierOf(row: AccountRow): SubscriptionTier {
  return enumFromToken(SubscriptionTierSchema, row.subscription_tier) as SubscriptionTier;
}

export function statusOf(row: AccountRow): SubscriptionStatus {
  return enumFromToken(SubscriptionStatusSchema, row.subscription_status) as SubscriptionStatus;
}

export function accountToProto(row: AccountRow): Account {
  return create(AccountSchema, {
    id: row.id,
    name: row.name,
    slug: row.slug,
    subscriptionTier: tierOf(row),
    subscriptionStatus: statusOf(row),
    addons: row.addons.map((token) => enumFromToken(AddonSchema, token) ?? Addon.UNSPECIFIED),
    hourlyRequestLimitOverride:
      row.hourly_request_limit_override === null ? undefined : BigInt(row.hourly_request_limit_override),
    createTime: timestampFromDate(row.created_at),
    updateTime: timestampFromDate(row.updated_at),
  });
}

export function planToProto(plan: PlanPolicy): Plan {
  const optional = (n: number | undefined) => (n === undefined ? undefined : BigInt(n));
  return create(PlanSchema, {
    tier: plan.tier,
    publicApiAccess: plan.publicApiAccess,
    qrCodeCapacity: optional(plan.qrCodeCapacity),
    customLinkCapacity: optional(plan.customLinkCapacity),
    hourlyRequestLimit: optional(plan.hourlyRequestLimit),
  });
}
