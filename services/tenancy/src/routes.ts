import type { ConnectRouter } from "@connectrpc/connect";
import { IdempotencyKeyService, TenancyAdminService, TenancyService } from "@qrplatform/api/tenancy";
import { createAccount, getAccount, listAccounts, listPlans, updateAccount } from "./accounts/accounts.handlers.js";
import type { TenancyDeps } from "./deps.js";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  expiredKeySweeper,
  releaseIdempotencyKey,
} from "./idempotency/idempotency-keys.handlers.js";
import { authenticateApiKey, createApiKey, listApiKeys, revokeApiKey } from "./keys/api-keys.handlers.js";

/**
 * Registers tenancy's services: the internal ones other services call (accounts and keys, and the
 * edge's idempotency keys), and the admin one qrctl calls.
 */
export function registerRoutes(router: ConnectRouter, deps: TenancyDeps): void {
  router.service(TenancyService, {
    authenticateApiKey: (req) => authenticateApiKey(deps, req),
    getAccount: (req) => getAccount(deps, req),
  });
  const sweeper = expiredKeySweeper(deps);
  router.service(IdempotencyKeyService, {
    claimIdempotencyKey: (req) => claimIdempotencyKey(deps, sweeper, req),
    completeIdempotencyKey: (req) => completeIdempotencyKey(deps, req),
    releaseIdempotencyKey: (req) => releaseIdempotencyKey(deps, req),
  });
  router.service(TenancyAdminService, {
    createAccount: (req) => createAccount(deps, req),
    listAccounts: (req) => listAccounts(deps, req),
    updateAccount: (req) => updateAccount(deps, req),
    listPlans: () => listPlans(),
    createApiKey: (req) => createApiKey(deps, req),
    listApiKeys: (req) => listApiKeys(deps, req),
    revokeApiKey: (req) => revokeApiKey(deps, req),
  });
}
