// Tenancy's Idempotency-Key store: one claim wins however many race for a key, a stored response is
// replayed only to the same request, a request that died loses its key after its lease, and keys end
// after 24 hours (then are swept). The clock is the test's.
import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import {
  IdempotencyKeyService,
  IdempotencyKeyState,
  SubscriptionTier,
  TenancyAdminService,
} from "@qrplatform/api/tenancy";
import { openTestDatabase } from "@qrplatform/db/testing";
import { credentials, MIGRATED_PLATFORM, PAGE_TOKEN_SECRET } from "@qrplatform/testing";
import type { Database } from "@qrplatform/db";
import { createLogger, errorInfoOf, inProcessTransport } from "@qrplatform/platform";
import { buildTenancy } from "../src/server.js";
import {
  IDEMPOTENCY_KEY_LEASE_MS,
  IDEMPOTENCY_KEY_RETENTION_MS,
} from "../src/idempotency/idempotency-keys.handlers.js";

const logger = createLogger({ service: "test", level: "silent" });

let database: Database;
let clock = new Date("2026-12-15T10:00:00.000Z");
let admin: Client<typeof TenancyAdminService>;
let keys: Client<typeof IdempotencyKeyService>;

beforeAll(async () => {
  database = await openTestDatabase(MIGRATED_PLATFORM);
  const module = await buildTenancy({ db: database.db, pageTokenSecret: PAGE_TOKEN_SECRET, now: () => clock });
  admin = createClient(
    TenancyAdminService,
    inProcessTransport({ modules: [module], credentials, logger, token: credentials.adminToken }),
  );
  keys = createClient(
    IdempotencyKeyService,
    inProcessTransport({ modules: [module], credentials, logger, token: credentials.serviceToken }),
  );
});
afterAll(() => database?.close());

const fingerprint = (request: string) => createHash("sha256").update(request).digest();
const response = {
  statusCode: 201,
  headers: { "content-type": "application/json; charset=utf-8", location: "/api/v1/workspaces/w" },
  body: Buffer.from('{"id":"w"}'),
};

async function newAccountId(): Promise<string> {
  const { account } = await admin.createAccount({
    name: `Keys ${randomUUID().slice(0, 6)}`,
    subscriptionTier: SubscriptionTier.ORIGIN,
  });
  return account!.id;
}

async function rowsOf(accountId: string): Promise<number> {
  const rows = await database.db
    .selectFrom("tenancy.idempotency_keys")
    .select("key")
    .where("account_id", "=", accountId)
    .execute();
  return rows.length;
}

describe("idempotency keys", () => {
  it("lets exactly one of 20 concurrent claims run, tells the others it is in progress, then replays the stored response", async () => {
    const accountId = await newAccountId();
    const request = { accountId, key: "k-1", fingerprint: fingerprint("POST /workspaces {}") };
    const claims = await Promise.all(Array.from({ length: 20 }, () => keys.claimIdempotencyKey(request)));
    const won = claims.filter((c) => c.state === IdempotencyKeyState.CLAIMED);
    expect(won).toHaveLength(1);
    expect(claims.filter((c) => c.state === IdempotencyKeyState.IN_PROGRESS)).toHaveLength(19);
    for (const waiting of claims.filter((c) => c.state === IdempotencyKeyState.IN_PROGRESS)) {
      expect(waiting.leaseExpireTime?.seconds).toBe(BigInt((clock.getTime() + IDEMPOTENCY_KEY_LEASE_MS) / 1000));
    }

    await keys.completeIdempotencyKey({ accountId, key: "k-1", claimId: won[0]!.claimId, response });
    const replayed = await keys.claimIdempotencyKey(request);
    expect(replayed.state).toBe(IdempotencyKeyState.COMPLETED);
    expect(replayed.response).toMatchObject({ statusCode: 201, headers: response.headers });
    expect(Buffer.from(replayed.response!.body).toString()).toBe('{"id":"w"}');
    // A claim that finished cannot store a second answer.
    const again = await keys
      .completeIdempotencyKey({ accountId, key: "k-1", claimId: won[0]!.claimId, response })
      .catch((e: unknown) => ConnectError.from(e));
    expect(again).toBeInstanceOf(ConnectError);
    expect((again as ConnectError).code).toBe(Code.FailedPrecondition);
  });

  it("tells a different request that the key is reused, while it runs and after", async () => {
    const accountId = await newAccountId();
    const claimed = await keys.claimIdempotencyKey({ accountId, key: "k-2", fingerprint: fingerprint("one") });
    expect((await keys.claimIdempotencyKey({ accountId, key: "k-2", fingerprint: fingerprint("two") })).state).toBe(
      IdempotencyKeyState.REUSED,
    );
    await keys.completeIdempotencyKey({ accountId, key: "k-2", claimId: claimed.claimId, response });
    expect((await keys.claimIdempotencyKey({ accountId, key: "k-2", fingerprint: fingerprint("two") })).state).toBe(
      IdempotencyKeyState.REUSED,
    );
  });

  it("keeps keys apart per account", async () => {
    const [a, b] = [await newAccountId(), await newAccountId()];
    const request = { key: "shared", fingerprint: fingerprint("same") };
    expect((await keys.claimIdempotencyKey({ accountId: a, ...request })).state).toBe(IdempotencyKeyState.CLAIMED);
    expect((await keys.claimIdempotencyKey({ accountId: b, ...request })).state).toBe(IdempotencyKeyState.CLAIMED);
  });

  it("frees a released key for the next claim, and ignores a release by a claim that lost the key", async () => {
    const accountId = await newAccountId();
    const request = { accountId, key: "k-3", fingerprint: fingerprint("r") };
    const first = await keys.claimIdempotencyKey(request);
    await keys.releaseIdempotencyKey({ accountId, key: "k-3", claimId: first.claimId });
    const second = await keys.claimIdempotencyKey(request);
    expect(second.state).toBe(IdempotencyKeyState.CLAIMED);
    await keys.releaseIdempotencyKey({ accountId, key: "k-3", claimId: first.claimId });
    expect((await keys.claimIdempotencyKey(request)).state).toBe(IdempotencyKeyState.IN_PROGRESS);
  });

  it("hands the key of a request that died to the same request once its lease is over, never to another", async () => {
    const accountId = await newAccountId();
    const request = { accountId, key: "k-4", fingerprint: fingerprint("lease") };
    const dead = await keys.claimIdempotencyKey(request);
    clock = new Date(clock.getTime() + IDEMPOTENCY_KEY_LEASE_MS - 1);
    expect((await keys.claimIdempotencyKey(request)).state).toBe(IdempotencyKeyState.IN_PROGRESS);
    clock = new Date(clock.getTime() + 1);
    expect((await keys.claimIdempotencyKey({ ...request, fingerprint: fingerprint("other") })).state).toBe(
      IdempotencyKeyState.REUSED,
    );
    const takeover = await keys.claimIdempotencyKey(request);
    expect(takeover.state).toBe(IdempotencyKeyState.CLAIMED);
    // The request that died cannot store its answer over the one now running.
    const late = await keys
      .completeIdempotencyKey({ accountId, key: "k-4", claimId: dead.claimId, response })
      .catch((e: unknown) => ConnectError.from(e));
    expect(errorInfoOf(late as ConnectError)?.reason).toBe("idempotency_claim_lost");
    await keys.completeIdempotencyKey({ accountId, key: "k-4", claimId: takeover.claimId, response });
  });

  it("forgets a key 24 hours after its first request, for any request, and sweeps expired keys", async () => {
    const accountId = await newAccountId();
    const claimed = await keys.claimIdempotencyKey({ accountId, key: "k-5", fingerprint: fingerprint("day one") });
    await keys.completeIdempotencyKey({ accountId, key: "k-5", claimId: claimed.claimId, response });
    await keys.claimIdempotencyKey({ accountId, key: "k-6", fingerprint: fingerprint("day one") });
    clock = new Date(clock.getTime() + IDEMPOTENCY_KEY_RETENTION_MS - 1);
    expect((await keys.claimIdempotencyKey({ accountId, key: "k-5", fingerprint: fingerprint("day one") })).state).toBe(
      IdempotencyKeyState.COMPLETED,
    );
    clock = new Date(clock.getTime() + 1);
    expect((await keys.claimIdempotencyKey({ accountId, key: "k-5", fingerprint: fingerprint("day two") })).state).toBe(
      IdempotencyKeyState.CLAIMED,
    );

    // k-6 expired unswept so far (k-5 was taken over); the next claim, a minute on, sweeps it.
    expect(await rowsOf(accountId)).toBe(2);
    clock = new Date(clock.getTime() + 60_000);
    await keys.claimIdempotencyKey({ accountId, key: "k-7", fingerprint: fingerprint("sweeper") });
    const keysLeft = async () =>
      (
        await database.db
          .selectFrom("tenancy.idempotency_keys")
          .select("key")
          .where("account_id", "=", accountId)
          .orderBy("key")
          .execute()
      ).map((r) => r.key);
    await expect.poll(keysLeft).toEqual(["k-5", "k-7"]);
  });

  it("refuses malformed keys, claims, fingerprints and statuses with INVALID_ARGUMENT, and unknown accounts with NOT_FOUND", async () => {
    const accountId = await newAccountId();
    const refusal = async (call: Promise<unknown>) => {
      const error = await call.then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      return { code: error?.code, fields: error ? errorInfoOf(error)?.fieldViolations.map((v) => v.field) : undefined };
    };
    expect(await refusal(keys.claimIdempotencyKey({ accountId, key: "", fingerprint: fingerprint("x") }))).toEqual({
      code: Code.InvalidArgument,
      fields: ["key"],
    });
    expect(
      await refusal(keys.claimIdempotencyKey({ accountId, key: "x".repeat(256), fingerprint: fingerprint("x") })),
    ).toEqual({ code: Code.InvalidArgument, fields: ["key"] });
    expect(
      await refusal(keys.claimIdempotencyKey({ accountId, key: "has space", fingerprint: fingerprint("x") })),
    ).toEqual({ code: Code.InvalidArgument, fields: ["key"] });
    expect(await refusal(keys.claimIdempotencyKey({ accountId, key: "k", fingerprint: new Uint8Array(31) }))).toEqual({
      code: Code.InvalidArgument,
      fields: ["fingerprint"],
    });
    expect(await refusal(keys.claimIdempotencyKey({ accountId: "", key: "k", fingerprint: fingerprint("x") }))).toEqual(
      { code: Code.InvalidArgument, fields: ["account_id"] },
    );
    expect(
      await refusal(
        keys.completeIdempotencyKey({
          accountId,
          key: "k",
          claimId: randomUUID(),
          response: { ...response, statusCode: 99 },
        }),
      ),
    ).toEqual({
      code: Code.InvalidArgument,
      fields: ["response.status_code"],
    });
    expect(await refusal(keys.releaseIdempotencyKey({ accountId, key: "k", claimId: "" }))).toEqual({
      code: Code.InvalidArgument,
      fields: ["claim_id"],
    });
    expect(
      (await refusal(keys.claimIdempotencyKey({ accountId: randomUUID(), key: "k", fingerprint: fingerprint("x") })))
        .code,
    ).toBe(Code.NotFound);
    expect(await rowsOf(accountId)).toBe(0);
  });
});
