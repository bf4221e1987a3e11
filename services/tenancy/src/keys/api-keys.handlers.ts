import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { z } from "zod";
import {
  ApiKeySchema,
  AuthenticateApiKeyResponseSchema,
  CreateApiKeyResponseSchema,
  ListApiKeysResponseSchema,
  RevokeApiKeyResponseSchema,
  type ApiKey,
  type AuthenticateApiKeyRequest,
  type AuthenticateApiKeyResponse,
  type CreateApiKeyRequest,
  type CreateApiKeyResponse,
  type ListApiKeysRequest,
  type ListApiKeysResponse,
  type RevokeApiKeyRequest,
  type RevokeApiKeyResponse,
} from "@qrplatform/api/tenancy";
import { Code, isUuid, notFound, serviceError, validate } from "@qrplatform/platform";
import type { TenancyDeps } from "../deps.js";
import { accountToProto, planToProto, statusOf, tierOf } from "../accounts/account-mapping.js";
import * as accounts from "../accounts/accounts.repository.js";
import { apiAccessOf, hourlyRequestLimitOf, planOf } from "../plans/plans.js";
import { displayPrefix, generateSecret, hashSecret, looksLikeSecret } from "./api-key-secret.js";
import type { ApiKeyRow } from "./api-keys.table.js";
import * as apiKeys from "./api-keys.repository.js";
import { resolveScopes } from "./scopes.js";

/** Keys live at most ten years; anything longer is a typo. */
const MAX_TIME_TO_LIVE_MS = 10 * 365 * 24 * 3600 * 1000;

function apiKeyToProto(row: ApiKeyRow): ApiKey {
  return create(ApiKeySchema, {
    id: row.id,
    accountId: row.account_id,
    displayPrefix: row.display_prefix,
    scopes: row.scopes,
    name: row.name,
    createTime: timestampFromDate(row.created_at),
    expireTime: row.expires_at ? timestampFromDate(row.expires_at) : undefined,
    revokeTime: row.revoked_at ? timestampFromDate(row.revoked_at) : undefined,
  });
}

const createApiKeyRequest = z.object({
  name: z.string().max(100, "must be at most 100 characters"),
  /** Scopes and roles, resolved to the scopes they grant; none given grants every scope. */
  scopes: z.array(z.string()).transform((requested, ctx) => {
    const resolved = resolveScopes(requested);
    if ("scopes" in resolved) return resolved.scopes;
    for (const entry of resolved.unknown) {
      ctx.addIssue({
        code: "custom",
        message: `"${entry}" is not a scope or role`,
        params: { reason: "unknown_scope" },
      });
    }
    return z.NEVER;
  }),
  /** How long the key lives, in milliseconds; undefined for a key that never expires. */
  timeToLive: z
    .object({ seconds: z.bigint(), nanos: z.number() })
    .optional()
    .transform((ttl) => (ttl ? Number(ttl.seconds) * 1000 + Math.floor(ttl.nanos / 1e6) : undefined))
    .refine((ms) => ms === undefined || (ms > 0 && ms <= MAX_TIME_TO_LIVE_MS), {
      message: "must be positive and at most ten years",
      params: { reason: "out_of_range" },
    }),
});

export async function createApiKey(deps: TenancyDeps, req: CreateApiKeyRequest): Promise<CreateApiKeyResponse> {
  const { scopes, timeToLive } = validate(createApiKeyRequest, req);
  const expiresAt = timeToLive === undefined ? null : new Date(deps.now().getTime() + timeToLive);
  if (!isUuid(req.accountId) || !(await accounts.find(deps.db, req.accountId))) throw notFound("account");

  const secret = generateSecret();
  const row = await apiKeys.insert(deps.db, {
    id: randomUUID(),
    account_id: req.accountId,
    name: req.name,
    secret_sha256: hashSecret(secret),
    display_prefix: displayPrefix(secret),
    scopes,
    expires_at: expiresAt,
    revoked_at: null,
  });
  return create(CreateApiKeyResponseSchema, { apiKey: apiKeyToProto(row), secret });
}

export async function listApiKeys(deps: TenancyDeps, req: ListApiKeysRequest): Promise<ListApiKeysResponse> {
  if (!isUuid(req.accountId) || !(await accounts.find(deps.db, req.accountId))) throw notFound("account");
  const rows = await apiKeys.list(deps.db, req.accountId);
  return create(ListApiKeysResponseSchema, { apiKeys: rows.map(apiKeyToProto) });
}

export async function revokeApiKey(deps: TenancyDeps, req: RevokeApiKeyRequest): Promise<RevokeApiKeyResponse> {
  const row = isUuid(req.apiKeyId) ? await apiKeys.revoke(deps.db, req.apiKeyId, deps.now()) : undefined;
  if (!row) throw notFound("API key");
  // Before answering: an edge that cached the key refuses it from the next request on.
  await deps.accessChanges.publish({ apiKeyIds: [row.id] });
  return create(RevokeApiKeyResponseSchema, { apiKey: apiKeyToProto(row) });
}

/** One answer for every kind of bad key, so a caller learns nothing about which keys exist. */
const invalidKey = () =>
  serviceError(
    Code.Unauthenticated,
    "invalid_api_key",
    "The API key is missing, malformed, unknown, expired or revoked.",
  );

export async function authenticateApiKey(
  deps: TenancyDeps,
  req: AuthenticateApiKeyRequest,
): Promise<AuthenticateApiKeyResponse> {
  if (!looksLikeSecret(req.secret)) throw invalidKey();
  const key = await apiKeys.findBySecretHash(deps.db, hashSecret(req.secret));
  const now = deps.now();
  if (!key || key.revoked_at || (key.expires_at && key.expires_at <= now)) throw invalidKey();
  const account = await accounts.find(deps.db, key.account_id);
  if (!account) throw invalidKey();

  const plan = planOf(tierOf(account));
  const hourlyRequestLimit = hourlyRequestLimitOf(plan, account.hourly_request_limit_override);
  return create(AuthenticateApiKeyResponseSchema, {
    apiKey: apiKeyToProto(key),
    account: accountToProto(account),
    plan: planToProto(plan),
    apiAccess: apiAccessOf(plan, statusOf(account)),
    hourlyRequestLimit: hourlyRequestLimit === undefined ? undefined : BigInt(hourlyRequestLimit),
  });
}
