import { randomBytes } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import { SubscriptionTier, type TenancyAdminService } from "@qrplatform/api/tenancy";

/** An account made for one test, with an API key of the given scopes (all scopes when none are given). */
export interface TestAccount {
  accountId: string;
  key: string;
  keyId: string;
}

/** Makes an account on a plan, named with a random suffix so tests sharing a stack never collide. */
export async function newAccount(
  admin: Client<typeof TenancyAdminService>,
  options: { tier?: SubscriptionTier; scopes?: string[]; name?: string } = {},
): Promise<TestAccount> {
  const { account } = await admin.createAccount({
    name: `${options.name ?? "Acme"} ${randomBytes(3).toString("hex")}`,
    subscriptionTier: options.tier ?? SubscriptionTier.ORIGIN,
  });
  const { secret, apiKey } = await admin.createApiKey({ accountId: account!.id, scopes: options.scopes ?? [] });
  return { accountId: account!.id, key: secret, keyId: apiKey!.id };
}
