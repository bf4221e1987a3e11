// Instances of a service starting at the same time on one database, as replicas of a deployment do:
// every instance must come up, and each migration must be applied once.
import { sql, type Kysely } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { SubscriptionTier, TenancyAdminService, TenancyService } from "@qrplatform/api/tenancy";
import { openDatabase, type Database } from "@qrplatform/db";
import { createScratchDatabase, openTestDatabase } from "@qrplatform/db/testing";
import { inProcessTransport, type GrpcModule } from "@qrplatform/platform";
import { buildTenancy } from "@qrplatform/tenancy";
import { CREDENTIALS, PAGE_TOKEN_SECRET, silentLogger } from "./support/platform.js";

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

const admin = (module: GrpcModule) =>
  createClient(
    TenancyAdminService,
    inProcessTransport({
      modules: [module],
      credentials: CREDENTIALS,
      logger: silentLogger,
      token: CREDENTIALS.adminToken,
    }),
  );
const internal = (module: GrpcModule) =>
  createClient(
    TenancyService,
    inProcessTransport({
      modules: [module],
      credentials: CREDENTIALS,
      logger: silentLogger,
      token: CREDENTIALS.serviceToken,
    }),
  );

async function appliedMigrations(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`SELECT name FROM tenancy.kysely_migration ORDER BY name`.execute(db);
  return rows.map((row) => row.name);
}

/** Each instance creates an account; every instance reads every account. */
async function expectSharedData(instances: GrpcModule[]): Promise<void> {
  const ids: string[] = [];
  for (const [i, instance] of instances.entries()) {
    const { account } = await admin(instance).createAccount({
      name: `Replica ${i}`,
      subscriptionTier: SubscriptionTier.FREE,
    });
    ids.push(account!.id);
  }
  for (const instance of instances) {
    for (const id of ids) expect((await internal(instance).getAccount({ accountId: id })).account?.id).toBe(id);
  }
}

describe("tenancy instances starting at once on one database", () => {
  it(`all migrate without error and apply each migration once (${process.env.DATABASE_URL ? "Postgres" : "PGlite"})`, async () => {
    const database = await openTestDatabase();
    cleanup.push(() => database.close());

    const instances = await Promise.all(
      [1, 2, 3].map(() => buildTenancy({ db: database.db, pageTokenSecret: PAGE_TOKEN_SECRET })),
    );
    expect(instances).toHaveLength(3);
    const applied = await appliedMigrations(database.db);
    expect(applied.length).toBeGreaterThan(0);
    expect(new Set(applied).size).toBe(applied.length);

    await expectSharedData(instances);
    // A later start finds nothing left to do and changes nothing.
    await buildTenancy({ db: database.db, pageTokenSecret: PAGE_TOKEN_SECRET });
    expect(await appliedMigrations(database.db)).toEqual(applied);
  });

  // Separate connection pools, like separate processes: the migrator's advisory lock is what keeps
  // them apart. Only Postgres can be shared across pools.
  it.runIf(process.env.DATABASE_URL)(
    "all migrate without error from separate connection pools (Postgres)",
    async () => {
      const scratch = (await createScratchDatabase())!;
      cleanup.push(() => scratch.drop());
      const pools: Database[] = [];
      for (let i = 0; i < 3; i++) {
        const pool = await openDatabase({ databaseUrl: scratch.url, dataDir: "", poolSize: 2 });
        pools.push(pool);
        cleanup.push(() => pool.close());
      }

      const instances = await Promise.all(
        pools.map((pool) => buildTenancy({ db: pool.db, pageTokenSecret: PAGE_TOKEN_SECRET })),
      );
      const applied = await appliedMigrations(pools[0]!.db);
      expect(applied.length).toBeGreaterThan(0);
      expect(new Set(applied).size).toBe(applied.length);
      await expectSharedData(instances);
    },
  );
});
