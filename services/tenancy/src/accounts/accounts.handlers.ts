import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { z } from "zod";
import {
  SubscriptionStatus,
  SubscriptionTier,
  type CreateAccountRequest,
  CreateAccountResponseSchema,
  type CreateAccountResponse,
  type GetAccountRequest,
  GetAccountResponseSchema,
  type GetAccountResponse,
  type ListAccountsRequest,
  ListAccountsResponseSchema,
  type ListAccountsResponse,
  ListPlansResponseSchema,
  type ListPlansResponse,
  type UpdateAccountRequest,
  UpdateAccountResponseSchema,
  type UpdateAccountResponse,
} from "@qrplatform/api/tenancy";
import {
  Code,
  isUniqueViolation,
  isUuid,
  notFound,
  pageOf,
  readPageRequest,
  serviceError,
  slugCandidates,
  validate,
} from "@qrplatform/platform";
import type { TenancyDeps } from "../deps.js";
import { PLANS, planOf } from "../plans/plans.js";
import { accountToProto, addonToken, planToProto, statusToken, tierOf, tierToken } from "./account-mapping.js";
import * as accounts from "./accounts.repository.js";

const nameSchema = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters");
const tierSchema = z.enum(SubscriptionTier).refine((t) => t !== SubscriptionTier.UNSPECIFIED, "a plan is required");

const createAccountSchema = z.object({
  name: nameSchema,
  subscriptionTier: tierSchema,
  subscriptionStatus: z.enum(SubscriptionStatus),
});

export async function createAccount(deps: TenancyDeps, req: CreateAccountRequest): Promise<CreateAccountResponse> {
  const input = validate(createAccountSchema, req);
  const status =
    input.subscriptionStatus === SubscriptionStatus.UNSPECIFIED ? SubscriptionStatus.ACTIVE : input.subscriptionStatus;
  for (const slug of slugCandidates(input.name, "account")) {
    try {
      const row = await accounts.insert(deps.db, {
        id: randomUUID(),
        name: input.name,
        slug,
        subscription_tier: tierToken(input.subscriptionTier),
        subscription_status: statusToken(status),
      });
      return create(CreateAccountResponseSchema, { account: accountToProto(row) });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }
  throw serviceError(Code.Aborted, "slug_conflict", "Could not choose a unique account slug; try again.");
}

export async function getAccount(deps: TenancyDeps, req: GetAccountRequest): Promise<GetAccountResponse> {
  const row = isUuid(req.accountId) ? await accounts.find(deps.db, req.accountId) : undefined;
  if (!row) throw notFound("account");
  return create(GetAccountResponseSchema, {
    account: accountToProto(row),
    plan: planToProto(planOf(tierOf(row))),
  });
}

export async function listAccounts(deps: TenancyDeps, req: ListAccountsRequest): Promise<ListAccountsResponse> {
  // Accounts are not account-scoped; their page tokens are bound to the empty account instead.
  const page = readPageRequest(deps.pageTokens, req, "", "accounts");
  const rows = await accounts.list(deps.db, { limit: page.fetch, after: page.after });
  const { items, nextPageToken } = pageOf(deps.pageTokens, rows, page.limit, "", "accounts");
  return create(ListAccountsResponseSchema, { accounts: items.map(accountToProto), nextPageToken });
}

const updateAccountSchema = z.object({
  name: nameSchema.optional(),
  subscriptionTier: tierSchema.optional(),
  subscriptionStatus: z
    .enum(SubscriptionStatus)
    .refine((s) => s !== SubscriptionStatus.UNSPECIFIED, "must be a status")
    .optional(),
  hourlyRequestLimitOverride: z.bigint().min(0n, "must not be negative").max(1_000_000_000n).optional(),
});

export async function updateAccount(deps: TenancyDeps, req: UpdateAccountRequest): Promise<UpdateAccountResponse> {
  const input = validate(updateAccountSchema, req);
  if (!isUuid(req.accountId)) throw notFound("account");
  const row = await deps.db.transaction().execute(async (trx) => {
    const current = await accounts.findForUpdate(trx, req.accountId);
    if (!current) throw notFound("account");
    const addons = new Set(current.addons);
    for (const addon of req.addAddons) addons.add(addonToken(addon));
    for (const addon of req.removeAddons) addons.delete(addonToken(addon));
    const override = req.clearHourlyRequestLimitOverride
      ? null
      : input.hourlyRequestLimitOverride !== undefined
        ? Number(input.hourlyRequestLimitOverride)
        : current.hourly_request_limit_override;
    return accounts.update(trx, current.id, {
      name: input.name ?? current.name,
      subscription_tier: input.subscriptionTier ? tierToken(input.subscriptionTier) : current.subscription_tier,
      subscription_status: input.subscriptionStatus
        ? statusToken(input.subscriptionStatus)
        : current.subscription_status,
      addons: [...addons].sort(),
      hourly_request_limit_override: override,
    });
  });
  if (!row) throw notFound("account");
  // Plan, status, add-ons and limit travel with every cached key of the account: edges drop them now.
  await deps.accessChanges.publish({ accountIds: [row.id] });
  return create(UpdateAccountResponseSchema, { account: accountToProto(row) });
}

export function listPlans(): ListPlansResponse {
  return create(ListPlansResponseSchema, { plans: Object.values(PLANS).map(planToProto) });
}
