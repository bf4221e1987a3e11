import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import {
  SubscriptionStatus,
  SubscriptionTier,
  SubscriptionTierSchema,
  TenancyAdminService,
  TenancyService,
} from "@qrplatform/api/tenancy";
import type { Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import {
  credentials,
  MIGRATED_PLATFORM,
  PAGE_TOKEN_SECRET,
  qrctlJson,
  type QrctlResult,
  runQrctl,
} from "@qrplatform/testing";
import { createLogger, enumTokens, remoteTransport, serveGrpc, type GrpcServer } from "@qrplatform/platform";
import { buildTenancy } from "@qrplatform/tenancy";

// Runs qrctl as a real subprocess against a real tenancy gRPC server, the way an operator does.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let database: Database;
let server: GrpcServer;
let address: string;
let root: string;
/** Holds .data/admin.json (mode 0600), found through the default DATA_DIR. */
let platformDir: string;
/** Holds no credential at all. */
let emptyDir: string;
/** A DATA_DIR whose admin.json other users can read. */
let looseDataDir: string;
let admin: ReturnType<typeof createClient<typeof TenancyAdminService>>;
let tenancy: ReturnType<typeof createClient<typeof TenancyService>>;

function qrctl(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<QrctlResult> {
  return runQrctl(args, { cwd: options.cwd ?? emptyDir, env: options.env ?? {} });
}

/** Parses stdout, failing the test (with stderr shown) unless it is exactly one JSON object. */
function json(result: QrctlResult): any {
  const parsed: unknown = qrctlJson(result);
  expect(parsed).toBeTypeOf("object");
  expect(Array.isArray(parsed)).toBe(false);
  return parsed;
}

const asAdmin = () => ["--address", address, "--token", credentials.adminToken];

async function newAccount(name: string, tier = SubscriptionTier.ORIGIN) {
  const { account } = await admin.createAccount({ name, subscriptionTier: tier });
  return account!;
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

beforeAll(async () => {
  database = await openTestDatabase(MIGRATED_PLATFORM);
  const module = await buildTenancy({ db: database.db, pageTokenSecret: PAGE_TOKEN_SECRET });
  server = await serveGrpc({
    modules: [module],
    credentials,
    logger: createLogger({ service: "test", level: "silent" }),
    host: "127.0.0.1",
    port: 0,
  });
  address = `http://127.0.0.1:${server.port}`;
  admin = createClient(TenancyAdminService, remoteTransport({ baseUrl: address, token: credentials.adminToken }));
  tenancy = createClient(TenancyService, remoteTransport({ baseUrl: address, token: credentials.serviceToken }));

  root = await mkdtemp(join(tmpdir(), "qrctl-test-"));
  platformDir = join(root, "platform");
  emptyDir = join(root, "empty");
  looseDataDir = join(root, "loose");
  await Promise.all([mkdir(join(platformDir, ".data"), { recursive: true }), mkdir(emptyDir), mkdir(looseDataDir)]);
  const adminJson = JSON.stringify({ address, token: credentials.adminToken });
  await writeFile(join(platformDir, ".data", "admin.json"), adminJson, { mode: 0o600 });
  await writeFile(join(looseDataDir, "admin.json"), adminJson);
  await chmod(join(looseDataDir, "admin.json"), 0o644);
});

afterAll(async () => {
  await server?.close();
  await database?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

// The cases run at once, each starting qrctl processes of its own (up to six), so a case's time is
// shared with every other case's processes: the timeout is for the group's pace, not one command's.
describe.concurrent("qrctl", { timeout: 90_000 }, () => {
  it("creates an account with the credential from admin.json and prints one JSON object", async () => {
    const account = json(
      await qrctl(["accounts", "create", "--name", "Acme", "--plan", "origin", "--json"], { cwd: platformDir }),
    );
    expect(account.id).toMatch(UUID);
    expect(account).toMatchObject({
      name: "Acme",
      subscription_tier: "origin",
      subscription_status: "active",
      addons: [],
      hourly_request_limit_override: null,
    });
    expect(account.slug).toMatch(/^acme/);
    expect(Number.isNaN(Date.parse(account.created_at))).toBe(false);

    const stored = await tenancy.getAccount({ accountId: account.id });
    expect(stored.account?.subscriptionTier).toBe(SubscriptionTier.ORIGIN);
  });

  it("updates plan, status, add-ons and the hourly limit, then clears them", async () => {
    const { id } = await newAccount("Update me", SubscriptionTier.FREE);
    const changed = json(
      await qrctl(
        [
          "accounts",
          "update",
          id,
          "--plan",
          "scale",
          "--status",
          "past_due",
          "--addon",
          "premium_frames",
          "--hourly-limit",
          "42",
          "--json",
        ],
        { cwd: platformDir },
      ),
    );
    expect(changed).toMatchObject({
      id,
      subscription_tier: "scale",
      subscription_status: "past_due",
      addons: ["premium_frames"],
      hourly_request_limit_override: 42,
    });
    expect((await tenancy.getAccount({ accountId: id })).account?.hourlyRequestLimitOverride).toBe(42n);

    const cleared = json(
      await qrctl(["accounts", "update", id, "--remove-addon", "premium_frames", "--clear-hourly-limit", "--json"], {
        cwd: platformDir,
      }),
    );
    expect(cleared).toMatchObject({ subscription_tier: "scale", addons: [], hourly_request_limit_override: null });
    const stored = (await tenancy.getAccount({ accountId: id })).account;
    expect(stored?.subscriptionStatus).toBe(SubscriptionStatus.PAST_DUE);
    expect(stored?.addons).toEqual([]);
    expect(stored?.hourlyRequestLimitOverride).toBeUndefined();
  });

  it("issues a key once, lists it without its secret, and revokes it (with --address/--token)", async () => {
    const { id: accountId } = await newAccount("Keys");
    const before = Date.now();
    const created = json(
      await qrctl([
        "keys",
        "create",
        "--account",
        accountId,
        "--name",
        "ci",
        "--scopes",
        "role:viewer",
        "--expires-in",
        "30d",
        "--json",
        ...asAdmin(),
      ]),
    );
    expect(created.key).toMatch(/^qrp_/);
    expect(created).toMatchObject({
      account_id: accountId,
      name: "ci",
      display_prefix: created.key.slice(0, created.display_prefix.length),
    });
    expect(created.scopes).toContain("qr_codes:read");
    expect(created.scopes).not.toContain("qr_codes:write");
    const expiresIn = Date.parse(created.expires_at) - before;
    expect(expiresIn).toBeGreaterThan(30 * 86_400_000 - 60_000);
    expect(expiresIn).toBeLessThan(30 * 86_400_000 + 60_000);
    // The printed secret is the real one: the platform authenticates it.
    expect((await tenancy.authenticateApiKey({ secret: created.key })).apiKey?.id).toBe(created.id);

    const listed = await qrctl(["keys", "list", "--account", accountId, "--json", ...asAdmin()]);
    expect(listed.stdout).not.toContain(created.key);
    const [key, ...others] = json(listed).keys;
    expect(others).toEqual([]);
    expect(key).toMatchObject({ id: created.id, revoked_at: null });
    expect(key).not.toHaveProperty("key");

    const revoked = json(await qrctl(["keys", "revoke", created.id, "--json", ...asAdmin()]));
    expect(revoked).toMatchObject({ id: created.id });
    expect(Number.isNaN(Date.parse(revoked.revoked_at))).toBe(false);

    const table = await qrctl(["keys", "list", "--account", accountId, ...asAdmin()]);
    expect(table.code).toBe(0);
    expect(table.stdout).not.toContain(created.key);
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+PREFIX\s+STATUS\s+CREATED/);
    expect(table.stdout.split("\n").find((line) => line.startsWith(created.id))).toMatch(/\brevoked\b/);
    await expect(tenancy.authenticateApiKey({ secret: created.key })).rejects.toThrow();
  });

  it("lists every account by following page tokens (with QRCTL_ADDRESS/QRCTL_TOKEN)", async () => {
    const mine = [await newAccount("Page A"), await newAccount("Page B"), await newAccount("Page C")].map((a) => a.id);
    const env = { QRCTL_ADDRESS: address, QRCTL_TOKEN: credentials.adminToken };
    const { accounts } = json(await qrctl(["accounts", "list", "--page-size", "2", "--json"], { env }));
    const ids = accounts.map((a: { id: string }) => a.id);
    expect(ids).toEqual(expect.arrayContaining(mine));
    expect(new Set(ids).size).toBe(ids.length);
    const created = accounts.map((a: { created_at: string }) => Date.parse(a.created_at));
    expect(created).toEqual([...created].sort((x, y) => x - y));
  });

  it("lists the plans", async () => {
    const env = { QRCTL_ADDRESS: address, QRCTL_TOKEN: credentials.adminToken };
    const { plans } = json(await qrctl(["plans", "list", "--json"], { env }));
    expect(plans.map((p: { tier: string }) => p.tier)).toEqual(enumTokens(SubscriptionTierSchema));
    const direct = (await admin.listPlans({})).plans.find((p) => p.tier === SubscriptionTier.ORIGIN);
    expect(plans.find((p: { tier: string }) => p.tier === "origin")).toMatchObject({
      public_api_access: direct?.publicApiAccess,
      hourly_request_limit: Number(direct?.hourlyRequestLimit),
    });
  });

  it("rejects bad arguments with one line on stderr before looking for a credential", async () => {
    const cases: [string[], RegExp][] = [
      [["accounts", "create", "--name", "X", "--plan", "gold"], /--plan.*gold.*origin/],
      [
        ["keys", "create", "--account", "00000000-0000-4000-8000-000000000000", "--expires-in", "30x"],
        /--expires-in.*30x/,
      ],
      [["accounts", "create", "--plan", "origin"], /--name/],
    ];
    const results = await Promise.all(cases.map(([args]) => qrctl(args)));
    results.forEach((result, i) => {
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe("");
      expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(result.stderr).toMatch(cases[i]![1]);
      expect(result.stderr).not.toMatch(/admin credential/);
    });
  });

  it("reports the platform's reason for an unknown scope", async () => {
    const { id } = await newAccount("Scopes");
    const result = await qrctl([
      "keys",
      "create",
      "--account",
      id,
      "--scopes",
      "qr_codes:read,everything",
      ...asAdmin(),
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/"everything" is not a scope/);
    expect(result.stderr).toMatch(/validation_error/);
    expect(await admin.listApiKeys({ accountId: id })).toMatchObject({ apiKeys: [] });
  });

  it("refuses an admin.json that other users can read", async () => {
    const result = await qrctl(["plans", "list"], { env: { DATA_DIR: looseDataDir } });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(join(looseDataDir, "admin.json"));
    expect(result.stderr).toMatch(/chmod 600/);
  });

  it("exits 2 with guidance when there is no credential", async () => {
    const result = await qrctl(["plans", "list"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/npm start/);
    expect(result.stderr).toMatch(/--address/);
  });

  it("refuses the service credential", async () => {
    const result = await qrctl(["plans", "list", "--address", address, "--token", credentials.serviceToken]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/PERMISSION_DENIED/);
  });

  it("names the address when the platform cannot be reached", async () => {
    const unreachable = `http://127.0.0.1:${await closedPort()}`;
    const result = await qrctl(["plans", "list", "--address", unreachable, "--token", credentials.adminToken]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(unreachable);
    expect(result.stderr).toMatch(/connection refused/);
  });
});
