import { ApiAccess, SubscriptionStatus, SubscriptionTier } from "@qrplatform/api/tenancy";

/** Everything one tier allows. `undefined` means unlimited. */
export interface PlanPolicy {
  readonly tier: SubscriptionTier;
  readonly publicApiAccess: boolean;
  readonly qrCodeCapacity: number | undefined;
  readonly customLinkCapacity: number | undefined;
  readonly hourlyRequestLimit: number | undefined;
}

/**
 * The single policy table of the platform. Capacities are the public contract's; hourly request
 * limits are ours (see docs/adr/0003-plans-and-quotas.md). The "links" figure of a plan counts
 * vanity links on custom domains: every QR code has a link on the default short domain, which
 * counts against the QR-code capacity instead.
 */
export const PLANS: Readonly<Record<Exclude<SubscriptionTier, SubscriptionTier.UNSPECIFIED>, PlanPolicy>> = {
  [SubscriptionTier.FREE]: {
    tier: SubscriptionTier.FREE,
    publicApiAccess: false,
    qrCodeCapacity: 10,
    customLinkCapacity: 10,
    hourlyRequestLimit: 0,
  },
  [SubscriptionTier.ORIGIN]: {
    tier: SubscriptionTier.ORIGIN,
    publicApiAccess: true,
    qrCodeCapacity: 100,
    customLinkCapacity: 100,
    hourlyRequestLimit: 1_000,
  },
  [SubscriptionTier.THRIVE]: {
    tier: SubscriptionTier.THRIVE,
    publicApiAccess: true,
    qrCodeCapacity: 500,
    customLinkCapacity: 500,
    hourlyRequestLimit: 5_000,
  },
  [SubscriptionTier.SCALE]: {
    tier: SubscriptionTier.SCALE,
    publicApiAccess: true,
    qrCodeCapacity: 5_000,
    customLinkCapacity: 1_000,
    hourlyRequestLimit: 20_000,
  },
  [SubscriptionTier.ENTERPRISE]: {
    tier: SubscriptionTier.ENTERPRISE,
    publicApiAccess: true,
    qrCodeCapacity: undefined,
    customLinkCapacity: undefined,
    hourlyRequestLimit: 100_000,
  },
};

/** The policy of a tier. */
export function planOf(tier: SubscriptionTier): PlanPolicy {
  const plan = PLANS[tier as keyof typeof PLANS];
  if (!plan) throw new RangeError(`No plan for tier ${tier}`);
  return plan;
}

/** Statuses in which an account's keys may use the API; suspended and canceled accounts are refused. */
const STATUSES_WITH_ACCESS: ReadonlySet<SubscriptionStatus> = new Set([
  SubscriptionStatus.TRIALING,
  SubscriptionStatus.ACTIVE,
  SubscriptionStatus.PAST_DUE,
]);

/** Whether an account on `plan` in `status` may use the public API now, and if not, why. */
export function apiAccessOf(plan: PlanPolicy, status: SubscriptionStatus): ApiAccess {
  if (!plan.publicApiAccess) return ApiAccess.PLAN_NOT_ELIGIBLE;
  return STATUSES_WITH_ACCESS.has(status) ? ApiAccess.ALLOWED : ApiAccess.ACCOUNT_INACTIVE;
}

/** An account's hourly request limit: its override when it has one, else its plan's; undefined means unlimited. */
export function hourlyRequestLimitOf(plan: PlanPolicy, override: number | null): number | undefined {
  return override ?? plan.hourlyRequestLimit;
}
