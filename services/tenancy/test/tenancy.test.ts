import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import {
  ApiAccess,
  Addon,
  SubscriptionStatus,
  SubscriptionTier,
  TenancyAdminService,
  TenancyService,
} from "@qrplatform/api/tenancy";
import { openTestDatabase } from "@qrplatform/db/testing";
import { credentials, MIGRATED_PLATFORM, PAGE_TOKEN_SECRET } from "@qrplatform/testing";
import type { Database } from "@qrplatform/db";
import { createLogger, errorInfoOf, inProcessTransport } from "@qrplatform/platform";
import { buildTenancy } from "../src/server.js";

const logger = createLogger({ service: "test", level: "silent" });

let database: Database;
let clock = new Date();
let admin: ReturnType<typeof createClient<typeof TenancyAdminService>>;
let tenancy: ReturnType<typeof createClient<typeof TenancyService>>;

beforeAll(async () => {
  database = await openTestDatabase(MIGRATED_PLATFORM);
  const module = await buildTenancy({ db: database.db, pageTokenSecret: PAGE_TOKEN_SECRET, now: () => clock });
  const asAdmin = inProcessTransport({ modules: [module], credentials, logger, token: credentials.adminToken });
  const asService = inProcessTransport({ modules: [module], credentials, logger, token: credentials.serviceToken });
  admin = createClient(TenancyAdminService, asAdmin);
  tenancy = createClient(TenancyService, asService);
});
afterAll(() => database?.close());

async function codeOf(call: Promise<unknown>): Promise<Code | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    return ConnectError.from(error).code;
  }
}

describe("accounts", () => {
  it("creates an account with a slug from its name and an active status", async () => {
    const { account } = await admin.createAccount({ name: "Acme Café", subscriptionTier: SubscriptionTier.ORIGIN });
    expect(account?.slug).toBe("acme-cafe");
    expect(account?.subscriptionStatus).toBe(SubscriptionStatus.ACTIVE);
    const again = await admin.createAccount({ name: "Acme Cafe", subscriptionTier: SubscriptionTier.ORIGIN });
    expect(again.account?.slug).toMatch(/^acme-cafe-[0-9a-f]{6}$/);
  });

  it("refuses an account without a plan or with an overlong name", async () => {
    expect(await codeOf(admin.createAccount({ name: "No plan" }))).toBe(Code.InvalidArgument);
    const error = await admin
      .createAccount({ name: "x".repeat(101), subscriptionTier: SubscriptionTier.FREE })
      .catch((e) => e);
    expect(errorInfoOf(ConnectError.from(error))?.fieldViolations.map((v) => v.field)).toEqual(["name"]);
  });

  it("updates plan, status, add-ons and the hourly override, and clears the override", async () => {
    const { account } = await admin.createAccount({ name: "Upd", subscriptionTier: SubscriptionTier.FREE });
    const updated = await admin.updateAccount({
      accountId: account!.id,
      subscriptionTier: SubscriptionTier.SCALE,
      subscriptionStatus: SubscriptionStatus.PAST_DUE,
      addAddons: [Addon.PREMIUM_FRAMES],
      hourlyRequestLimitOverride: 42n,
    });
    expect(updated.account).toMatchObject({
      subscriptionTier: SubscriptionTier.SCALE,
      subscriptionStatus: SubscriptionStatus.PAST_DUE,
      addons: [Addon.PREMIUM_FRAMES],
      hourlyRequestLimitOverride: 42n,
    });
    const cleared = await admin.updateAccount({
      accountId: account!.id,
      removeAddons: [Addon.PREMIUM_FRAMES],
      clearHourlyRequestLimitOverride: true,
    });
    expect(cleared.account?.addons).toEqual([]);
    expect(cleared.account?.hourlyRequestLimitOverride).toBeUndefined();
    expect(cleared.account?.subscriptionTier).toBe(SubscriptionTier.SCALE);
  });

  it("pages through accounts with tokens that cannot be tampered with", async () => {
    for (let i = 0; i < 5; i++)
      await admin.createAccount({ name: `Page ${i}`, subscriptionTier: SubscriptionTier.FREE });
    const seen: string[] = [];
    let pageToken = "";
    do {
      const page = await admin.listAccounts({ pageSize: 2, pageToken });
      expect(page.accounts.length).toBeLessThanOrEqual(2);
      seen.push(...page.accounts.map((a) => a.id));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(new Set(seen).size).toBe(seen.length);
    const all = await admin.listAccounts({ pageSize: 100 });
    expect(seen).toEqual(all.accounts.map((a) => a.id));

    const first = await admin.listAccounts({ pageSize: 1 });
    const forged = first.nextPageToken.replace(/^./, (c) => (c === "A" ? "B" : "A"));
    expect(await codeOf(admin.listAccounts({ pageSize: 1, pageToken: forged }))).toBe(Code.InvalidArgument);
  });
});

describe("API keys", () => {
  it("issues a prefixed secret once, stores only its hash, and authenticates it", async () => {
    const { account } = await admin.createAccount({ name: "Keys", subscriptionTier: SubscriptionTier.THRIVE });
    const created = await admin.createApiKey({ accountId: account!.id, scopes: ["role:viewer"] });
    expect(created.secret).toMatch(/^qrp_[A-Za-z0-9_-]{43}$/);
    expect(created.apiKey?.scopes).not.toContain("qr_codes:write");
    expect(created.apiKey?.scopes).toContain("qr_codes:read");

    const stored = await database.db.selectFrom("tenancy.api_keys").selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(created.secret);

    const auth = await tenancy.authenticateApiKey({ secret: created.secret });
    expect(auth.account?.id).toBe(account!.id);
    expect(auth.apiAccess).toBe(ApiAccess.ALLOWED);
    expect(auth.plan?.qrCodeCapacity).toBe(500n);
  });

  it("answers the hourly request limit that applies: the account's override, else its plan's", async () => {
    const { account } = await admin.createAccount({ name: "Limits", subscriptionTier: SubscriptionTier.THRIVE });
    const { secret } = await admin.createApiKey({ accountId: account!.id });
    const limit = async () => (await tenancy.authenticateApiKey({ secret })).hourlyRequestLimit;
    expect(await limit()).toBe(5_000n);
    await admin.updateAccount({ accountId: account!.id, hourlyRequestLimitOverride: 42n });
    expect(await limit()).toBe(42n);
    await admin.updateAccount({ accountId: account!.id, hourlyRequestLimitOverride: 0n });
    expect(await limit()).toBe(0n);
    await admin.updateAccount({
      accountId: account!.id,
      clearHourlyRequestLimitOverride: true,
      subscriptionTier: SubscriptionTier.SCALE,
    });
    expect(await limit()).toBe(20_000n);
  });

  it("refuses unknown, malformed, expired and revoked secrets with the same error", async () => {
    const { account } = await admin.createAccount({ name: "Bad keys", subscriptionTier: SubscriptionTier.ORIGIN });
    const expiring = await admin.createApiKey({ accountId: account!.id, timeToLive: durationFromMs(60_000) });
    const revoked = await admin.createApiKey({ accountId: account!.id });
    await admin.revokeApiKey({ apiKeyId: revoked.apiKey!.id });
    clock = new Date(clock.getTime() + 61_000);
    try {
      const secrets = ["", "nope", `qrp_${"A".repeat(43)}`, expiring.secret, revoked.secret];
      const messages = new Set<string>();
      for (const secret of secrets) {
        const error = ConnectError.from(await tenancy.authenticateApiKey({ secret }).catch((e) => e));
        expect(error.code).toBe(Code.Unauthenticated);
        messages.add(error.rawMessage);
      }
      expect(messages.size).toBe(1);
    } finally {
      clock = new Date();
    }
  });

  it("tells the edge when the plan or the status forbids API access", async () => {
    const { account } = await admin.createAccount({ name: "Free", subscriptionTier: SubscriptionTier.FREE });
    const key = await admin.createApiKey({ accountId: account!.id });
    expect((await tenancy.authenticateApiKey({ secret: key.secret })).apiAccess).toBe(ApiAccess.PLAN_NOT_ELIGIBLE);
    await admin.updateAccount({
      accountId: account!.id,
      subscriptionTier: SubscriptionTier.ORIGIN,
      subscriptionStatus: SubscriptionStatus.SUSPENDED,
    });
    expect((await tenancy.authenticateApiKey({ secret: key.secret })).apiAccess).toBe(ApiAccess.ACCOUNT_INACTIVE);
  });

  it("rejects unknown scopes and keeps the service credential out of the admin service", async () => {
    const { account } = await admin.createAccount({ name: "Scopes", subscriptionTier: SubscriptionTier.ORIGIN });
    expect(await codeOf(admin.createApiKey({ accountId: account!.id, scopes: ["everything"] }))).toBe(
      Code.InvalidArgument,
    );
    const module = await buildTenancy({ db: database.db, pageTokenSecret: PAGE_TOKEN_SECRET });
    const asService = inProcessTransport({ modules: [module], credentials, logger, token: credentials.serviceToken });
    const anonymous = inProcessTransport({ modules: [module], credentials, logger, token: "" });
    expect(await codeOf(createClient(TenancyAdminService, asService).listPlans({}))).toBe(Code.PermissionDenied);
    expect(await codeOf(createClient(TenancyService, anonymous).getAccount({ accountId: account!.id }))).toBe(
      Code.Unauthenticated,
    );
  });
});
