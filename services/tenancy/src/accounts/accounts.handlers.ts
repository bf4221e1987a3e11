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
import { Code, invalidArgument, isUuid, notFound, serviceError, validate } from "@qrplatform/platform";
import type { TenancyDeps } from "../deps.js";
import { PLANS, planOf } from "../plans/plans.js";
import { accountToProto, addonToken, planToProto, statusToken, tierOf, tierToken } from "./account-mapping.js";
import { findAccount, findAccountForUpdate, insertAccount, listAccounts, updateAccount } from "./accounts.repository.js";
import { slugify, withRandomSuffix } from "./slug.js";

const DEFAULT_PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 100;

const nameSchema = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters");
const tierSchema = z.enum(SubscriptionTier).refine((t) => t !== SubscriptionTier.UNSPECIFIED, "a plan is required");

const createAccountSchema = z.object({
  name: nameSchema,
  subscriptionTier: tierSchema,
  subscriptionStatus: z.enum(SubscriptionStatus),
});

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && "code" in error && error.code === "23505";
}

export async function createAccount(deps: TenancyDeps, req: CreateAccountRequest): Promise<CreateAccountResponse> {
  const input = validate(createAccountSchema, req);
  const status = input.subscriptionStatus === SubscriptionStatus.UNSPECIFIED ? SubscriptionStatus.ACTIVE : input.subscriptionStatus;
  const base = slugify(input.name);
  // The plain slug first; on a clash, random suffixes, which practically never clash twice.
  for (const slug of [base, withRandomSuffix(base), withRandomSuffix(base)]) {
    try {
      const row = await insertAccount(deps.db, {
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
  const row = isUuid(req.accountId) ? await findAccount(deps.db, req.accountId) : undefined;
  if (!row) throw notFound("account");
  return create(GetAccountResponseSchema, {
    account: accountToProto(row),
    plan: planToProto(planOf(tierOf(row))),
  });
}

export async function listAccountsPage(deps: TenancyDeps, req: ListAccountsRequest): Promise<ListAccountsResponse> {
  if (req.pageSize < 0 || req.pageSize > MAX_PAGE_SIZE) {
    throw invalidArgument([{ field: "page_size", reason: "out_of_range", description: `must be 1 to ${MAX_PAGE_SIZE}` }]);
  }
  const limit = req.pageSize || DEFAULT_PAGE_SIZE;
  let after: { createdAt: Date; id: string } | undefined;
  if (req.pageToken) {
    const position = deps.pageTokens.decode(req.pageToken, "", "accounts");
    if (!position) throw invalidArgument([{ field: "page_token", reason: "invalid", description: "is not a token this list issued" }]);
    after = { createdAt: new Date(position.after), id: position.afterId };
  }
  const rows = await listAccounts(deps.db, { limit: limit + 1, after });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const nextPageToken =
    rows.length > limit && last
      ? deps.pageTokens.encode({ accountId: "", scope: "accounts", after: last.created_at.toISOString(), afterId: last.id })
      : "";
  return create(ListAccountsResponseSchema, { accounts: page.map(accountToProto), nextPageToken });
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

export async function updateAccountSettings(deps: TenancyDeps, req: UpdateAccountRequest): Promise<UpdateAccountResponse> {
  const input = validate(updateAccountSchema, req);
  if (!isUuid(req.accountId)) throw notFound("account");
  const row = await deps.db.transaction().execute(async (trx) => {
    const current = await findAccountForUpdate(trx, req.accountId);
    if (!current) throw notFound("account");
    const addons = new Set(current.addons);
    req.addAddons.forEach((a) => addons.add(addonToken(a)));
    req.removeAddons.forEach((a) => addons.delete(addonToken(a)));
    const override = req.clearHourlyRequestLimitOverride
      ? null
      : input.hourlyRequestLimitOverride !== undefined
        ? Number(input.hourlyRequestLimitOverride)
        : current.hourly_request_limit_override;
    return updateAccount(trx, current.id, {
      name: input.name ?? current.name,
      subscription_tier: input.subscriptionTier ? tierToken(input.subscriptionTier) : current.subscription_tier,
      subscription_status: input.subscriptionStatus ? statusToken(input.subscriptionStatus) : current.subscription_status,
      addons: [...addons].sort(),
      hourly_request_limit_override: override,
    });
  });
  if (!row) throw notFound("account");
  return create(UpdateAccountResponseSchema, { account: accountToProto(row) });
}

export function listPlans(): ListPlansResponse {
  return create(ListPlansResponseSchema, { plans: Object.values(PLANS).map(planToProto) });
}
