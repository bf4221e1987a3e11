import type { ConnectRouter } from "@connectrpc/connect";
import { TenancyAdminService, TenancyService } from "@qrplatform/api/tenancy";
import {
  createAccount,
  getAccount,
  listAccountsPage,
  listPlans,
  updateAccountSettings,
} from "./accounts/accounts.handlers.js";
import type { TenancyDeps } from "./deps.js";
import {
  authenticateApiKey,
  createApiKey,
  listApiKeysOf,
  revokeApiKeyById,
} from "./keys/api-keys.handlers.js";

/** Registers tenancy's two services: the internal one other services call, and the admin one qrctl calls. */
export function registerRoutes(router: ConnectRouter, deps: TenancyDeps): void {
  router.service(TenancyService, {
    authenticateApiKey: (req) => authenticateApiKey(deps, req),
    getAccount: (req) => getAccount(deps, req),
  });
  router.service(TenancyAdminService, {
    createAccount: (req) => createAccount(deps, req),
    listAccounts: (req) => listAccountsPage(deps, req),
    updateAccount: (req) => updateAccountSettings(deps, req),
    listPlans: () => listPlans(),
    createApiKey: (req) => createApiKey(deps, req),
    listApiKeys: (req) => listApiKeysOf(deps, req),
    revokeApiKey: (req) => revokeApiKeyById(deps, req),
  });
}
