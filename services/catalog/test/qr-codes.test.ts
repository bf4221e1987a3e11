// The catalog's QR codes against real tenancy, links and rendering modules on one test database.
import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { QrCodeService, QrCodeStatus, WorkspaceService } from "@qrplatform/api/catalog";
import { DomainService, LinkService, LinkStatus } from "@qrplatform/api/links";
import { SubscriptionTier, TenancyAdminService } from "@qrplatform/api/tenancy";
import type { Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { buildLinks } from "@qrplatform/links";
import { credentials, PAGE_TOKEN_SECRET } from "@qrplatform/testing";
import { createLogger, errorInfoOf, inProcessTransport, type GrpcModule } from "@qrplatform/platform";
import { buildRendering } from "@qrplatform/rendering";
import { buildTenancy } from "@qrplatform/tenancy";
import type { ReconcilerOptions } from "../src/qr-codes/qr-code-reconciler.js";
import { claimStalePending, type PendingQrCodeRow } from "../src/qr-codes/qr-codes.repository.js";
import { buildCatalog } from "../src/server.js";
import { MemoryDns } from "@qrplatform/testing/dns-server";

const logger = createLogger({ service: "test", level: "silent" });
const pageTokenSecret = PAGE_TOKEN_SECRET;

let database: Database;
let admin: ReturnType<typeof createClient<typeof TenancyAdminService>>;
let linksModule: GrpcModule;
let tenancyModule: GrpcModule;
let renderingModule: GrpcModule;

const local = (modules: GrpcModule[], interceptors: Interceptor[] = [], token = credentials.serviceToken): Transport =>
  inProcessTransport({ modules, credentials, logger, token, interceptors });

/**
 * A catalog whose calls to the links service pass through `linkInterceptors`, to inject failures;
 * its reconciler takes every pending operation for abandoned unless told otherwise.
 */
async function catalogWith(
  linkInterceptors: Interceptor[] = [],
  reconciler: Partial<ReconcilerOptions> = { graceMs: 0 },
  renderingInterceptors: Interceptor[] = [],
) {
  const module = await buildCatalog({
    db: database.db,
    pageTokenSecret,
    logger,
    transports: {
      tenancy: local([tenancyModule]),
      links: local([linksModule], linkInterceptors),
      rendering: local([renderingModule], renderingInterceptors),
    },
    reconciler,
  });
  return {
    qrCodes: createClient(QrCodeService, local([module])),
    workspaces: createClient(WorkspaceService, local([module])),
    reconciler: module.reconciler,
  };
}

async function originAccount(): Promise<string> {
  const { account } = await admin.createAccount({ name: "Capacity", subscriptionTier: SubscriptionTier.ORIGIN });
  return account!.id;
}

const reasonOf = (error: unknown) => errorInfoOf(ConnectError.from(error))?.reason;

beforeAll(async () => {
  database = await openTestDatabase();
  tenancyModule = await buildTenancy({ db: database.db, pageTokenSecret });
  linksModule = await buildLinks({ db: database.db, pageTokenSecret, shortLinkBaseUrl: "http://qr.test" });
  renderingModule = await buildRendering();
  admin = createClient(TenancyAdminService, local([tenancyModule], [], credentials.adminToken));
});
afterAll(() => database?.close());

/** Codes that take capacity, written straight to the table: hundreds of creates would only slow the tests. */
async function insertCodesDirectly(
  accountId: string,
  count: number,
  overrides: { vanity_domain_id?: string; vanity_url?: string } = {},
): Promise<void> {
  await database.db
    .withSchema("catalog")
    .insertInto("qr_codes")
    .values(
      Array.from({ length: count }, () => ({
        id: randomUUID(),
        account_id: accountId,
        name: "existing",
        destination_url: "https://example.com/",
        status: "active",
        link_id: randomUUID(),
        vanity_url: "http://qr.test/x",
        canonical_url: "http://qr.test/x",
        design: "{}",
        ...overrides,
      })),
    )
    .execute();
}

describe("capacity", () => {
  it("admits exactly one of 20 concurrent creates at capacity minus one, every time", async () => {
    const { qrCodes } = await catalogWith();
    const accountId = await originAccount();
    const create = (name: string) => qrCodes.createQrCode({ accountId, name, destinationUrl: "https://example.com/" });
    for (let i = 0; i < 99; i++) await create(`fill ${i}`);

    for (let round = 0; round < 3; round++) {
      const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => create(`race ${round}.${i}`)));
      const admitted = results.filter((r) => r.status === "fulfilled");
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      expect(admitted).toHaveLength(1);
      expect(refused.map((r) => reasonOf(r.reason))).toEqual(Array(19).fill("qr_code_limit_reached"));
      expect((await qrCodes.getCapacity({ accountId })).capacity).toMatchObject({
        qrCodesUsed: 100n,
        qrCodesLimit: 100n,
      });

      // Deleting frees the place for the next round.
      const winner = (admitted[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof create>>>).value.qrCode!;
      await qrCodes.deleteQrCode({ accountId, qrCodeId: winner.id });
    }
  }, 120_000);

  it("counts the account's codes in every workspace, refuses one too many with the limit and use, and frees a place on delete", async () => {
    const { qrCodes, workspaces } = await catalogWith();
    const accountId = await originAccount();
    const [first, second] = await Promise.all(
      ["First", "Second"].map(async (name) => (await workspaces.createWorkspace({ accountId, name })).workspace!.id),
    );
    const inFirst = await qrCodes.createQrCode({
      accountId,
      workspaceId: first,
      name: "first",
      destinationUrl: "https://example.com/",
    });
    await qrCodes.createQrCode({
      accountId,
      workspaceId: second,
      name: "second",
      destinationUrl: "https://example.com/",
    });
    await insertCodesDirectly(accountId, 98);

    const refused = await qrCodes
      .createQrCode({ accountId, workspaceId: second, name: "one too many", destinationUrl: "https://example.com/" })
      .catch((e: unknown) => ConnectError.from(e));
    expect([(refused as ConnectError).code, reasonOf(refused)]).toEqual([
      Code.ResourceExhausted,
      "qr_code_limit_reached",
    ]);
    expect(errorInfoOf(refused as ConnectError)?.metadata).toEqual({ limit: "100", used: "100" });

    await qrCodes.deleteQrCode({ accountId, qrCodeId: inFirst.qrCode!.id });
    expect((await qrCodes.getCapacity({ accountId })).capacity).toMatchObject({ qrCodesUsed: 99n, qrCodesLimit: 100n });
    const fits = await qrCodes.createQrCode({
      accountId,
      workspaceId: second,
      name: "fits again",
      destinationUrl: "https://example.com/",
    });
    expect(fits.qrCode?.workspaceId).toBe(second);
  });
});

describe("codes and their links", () => {
  it("keeps a code's link at the code's destination and status through create, update and delete", async () => {
    const { qrCodes } = await catalogWith();
    const links = createClient(LinkService, local([linksModule]));
    const accountId = await originAccount();
    const linkOf = async (linkId: string) => (await links.getLink({ accountId, linkId })).link!;

    const { qrCode: created } = await qrCodes.createQrCode({
      accountId,
      name: "Menu",
      destinationUrl: "https://example.com/menu",
    });
    const link = await linkOf(created!.linkId);
    expect(link).toMatchObject({
      accountId,
      destinationUrl: "https://example.com/menu",
      vanityUrl: created!.vanityUrl,
      canonicalUrl: created!.canonicalUrl,
    });

    await qrCodes.updateQrCode({
      accountId,
      qrCodeId: created!.id,
      destinationUrl: "https://example.com/lunch",
      status: QrCodeStatus.PAUSED,
    });
    expect(await linkOf(created!.linkId)).toMatchObject({
      destinationUrl: "https://example.com/lunch",
      status: LinkStatus.PAUSED,
    });
    expect((await qrCodes.getQrCode({ accountId, qrCodeId: created!.id })).qrCode).toMatchObject({
      destinationUrl: "https://example.com/lunch",
      status: QrCodeStatus.PAUSED,
    });
    await qrCodes.updateQrCode({ accountId, qrCodeId: created!.id, status: QrCodeStatus.ACTIVE });
    expect((await linkOf(created!.linkId)).status).toBe(LinkStatus.ACTIVE);

    // Another account cannot see the link, and deleting the code deletes it.
    const stranger = await links
      .getLink({ accountId: await originAccount(), linkId: created!.linkId })
      .catch((e: unknown) => ConnectError.from(e));
    expect((stranger as ConnectError).code).toBe(Code.NotFound);
    await qrCodes.deleteQrCode({ accountId, qrCodeId: created!.id });
    const gone = await links
      .getLink({ accountId, linkId: created!.linkId })
      .catch((e: unknown) => ConnectError.from(e));
    expect((gone as ConnectError).code).toBe(Code.NotFound);
  });
});

describe("checks before reserving", () => {
  it("refuses a link field the links service would refuse before taking a place: a full account hears why, and links is never asked", async () => {
    const linkCalls: string[] = [];
    const countLinkCalls: Interceptor = (next) => async (req) => {
      linkCalls.push(req.method.name);
      return next(req);
    };
    const { qrCodes } = await catalogWith([countLinkCalls]);
    const accountId = await originAccount();
    await insertCodesDirectly(accountId, 100);

    const refusals = await Promise.all(
      [
        { name: "bad url", destinationUrl: "not a url" },
        { name: "script", destinationUrl: "javascript:alert(1)" },
        { name: "bad slug", destinationUrl: "https://example.com/", vanityDomainId: randomUUID(), vanitySlug: "a" },
        { name: "slug alone", destinationUrl: "https://example.com/", vanitySlug: "spring-sale" },
      ].map((req) => qrCodes.createQrCode({ accountId, ...req }).catch((e: unknown) => ConnectError.from(e))),
    );
    // Not qr_code_limit_reached: the request is refused for what it is before the capacity is looked at.
    expect(
      refusals.map((e) => [reasonOf(e), errorInfoOf(e as ConnectError)?.fieldViolations.map((v) => v.field)]),
    ).toEqual([
      ["validation_error", ["destination_url"]],
      ["validation_error", ["destination_url"]],
      ["validation_error", ["vanity_slug"]],
      ["validation_error", ["vanity_domain_id"]],
    ]);
    expect(linkCalls).toEqual([]);
    expect((await qrCodes.getCapacity({ accountId })).capacity).toMatchObject({
      qrCodesUsed: 100n,
      qrCodesLimit: 100n,
    });
  });
});

describe("custom-link capacity", () => {
  it("limits codes on custom domains to the plan's links figure, apart from the QR-code capacity", async () => {
    const dns = new MemoryDns();
    {
      const links = await buildLinks({
        db: database.db,
        pageTokenSecret,
        shortLinkBaseUrl: "http://qr.test",
        lookupTxt: dns.lookupTxt,
      });
      const module = await buildCatalog({
        db: database.db,
        pageTokenSecret,
        logger,
        transports: { tenancy: local([tenancyModule]), links: local([links]), rendering: local([renderingModule]) },
      });
      const qrCodes = createClient(QrCodeService, local([module]));
      const { account } = await admin.createAccount({ name: "Scale", subscriptionTier: SubscriptionTier.SCALE });
      const accountId = account!.id;
      const domains = createClient(DomainService, local([links]));
      const { domain } = await domains.createDomain({ accountId, hostname: "go.scale.example" });
      dns.setTxt(domain!.challengeRecordName, domain!.challengeRecordValue);
      await domains.verifyDomain({ accountId, domainId: domain!.id });

      // 999 codes already on the custom domain.
      await insertCodesDirectly(accountId, 999, {
        vanity_domain_id: domain!.id,
        vanity_url: "https://go.scale.example/x",
      });

      const vanity = (slug: string) =>
        qrCodes.createQrCode({
          accountId,
          name: slug,
          destinationUrl: "https://example.com/",
          vanityDomainId: domain!.id,
          vanitySlug: slug,
        });
      expect((await vanity("last-one")).qrCode?.vanityUrl).toBe("https://go.scale.example/last-one");
      const refused = await vanity("one-too-many").catch((e: unknown) => ConnectError.from(e));
      expect(reasonOf(refused)).toBe("link_limit_reached");
      expect(errorInfoOf(refused as ConnectError)?.metadata).toEqual({ limit: "1000", used: "1000" });
      // Codes on the short domain still fit: the QR-code capacity (5,000) is separate.
      expect(
        (await qrCodes.createQrCode({ accountId, name: "plain", destinationUrl: "https://example.com/" })).qrCode,
      ).toBeDefined();
    }
  });
});

describe("atomic creation", () => {
  it("holds the place of a create whose link call ended without an answer until the reconciler confirms there is no link", async () => {
    const failCreateLink: Interceptor = (next) => async (req) => {
      if (req.method.name === "CreateLink") throw new ConnectError("links is down", Code.Unavailable);
      return next(req);
    };
    const catalog = await catalogWith([failCreateLink]);
    const accountId = await originAccount();
    const error = await catalog.qrCodes
      .createQrCode({ accountId, name: "x", destinationUrl: "https://example.com/" })
      .catch((e: unknown) => e);
    expect(ConnectError.from(error).code).toBe(Code.Unavailable);
    expect((await catalog.qrCodes.listQrCodes({ accountId })).qrCodes).toEqual([]);
    // The links service may still have been making the link: the place stays held, out of sight...
    expect((await catalog.qrCodes.getCapacity({ accountId })).capacity?.qrCodesUsed).toBe(1n);
    // ...until the grace period has passed and the reconciler finds no link behind it.
    expect(await catalog.reconciler.runOnce()).toMatchObject({ createsUndone: 1, failed: 0 });
    expect((await catalog.qrCodes.getCapacity({ accountId })).capacity?.qrCodesUsed).toBe(0n);
  });

  it("leaves no code and no link when the link is refused, and the refused request's slug stays free", async () => {
    const { qrCodes } = await catalogWith();
    const accountId = await originAccount();
    const bad = await qrCodes
      .createQrCode({ accountId, name: "x", destinationUrl: "javascript:alert(1)" })
      .catch((e: unknown) => e);
    expect(errorInfoOf(ConnectError.from(bad))?.fieldViolations.map((v) => v.field)).toEqual(["destination_url"]);
    expect((await qrCodes.getCapacity({ accountId })).capacity?.qrCodesUsed).toBe(0n);
  });

  it("purges the link when the code cannot be completed after the link was made", async () => {
    let createdLinkId: string | undefined;
    // The link is made, then the reservation disappears before completion (as when the reconciler
    // undid a create that took longer than its grace period).
    const dropReservation: Interceptor = (next) => async (req) => {
      const res = await next(req);
      if (req.method.name === "CreateLink") {
        createdLinkId = (res.message as { link?: { id: string } }).link?.id;
        await database.db
          .withSchema("catalog")
          .deleteFrom("qr_codes")
          .where("pending_operation", "=", "create")
          .execute();
      }
      return res;
    };
    const { qrCodes } = await catalogWith([dropReservation]);
    const accountId = await originAccount();
    await expect(
      qrCodes.createQrCode({ accountId, name: "x", destinationUrl: "https://example.com/" }),
    ).rejects.toThrow();
    expect(createdLinkId).toBeDefined();
    const links = createClient(LinkService, local([linksModule]));
    const lookup = await links
      .getLink({ accountId, linkId: createdLinkId! })
      .catch((e: unknown) => ConnectError.from(e));
    expect((lookup as ConnectError).code).toBe(Code.NotFound);
    expect((await qrCodes.getCapacity({ accountId })).capacity?.qrCodesUsed).toBe(0n);
  });
});

describe("a create outliving the grace period", () => {
  it("does not complete a reservation the reconciler has claimed, so the link it purges belongs to no code", async () => {
    let claimed: PendingQrCodeRow[] = [];
    // The link is made; before the create completes the code, a reconciler whose grace period the
    // create outlived claims the reservation (its first step; purging the link is its second).
    const reconcilerClaims: Interceptor = (next) => async (req) => {
      const res = await next(req);
      if (req.method.name === "CreateLink") {
        const now = new Date(Date.now() + 1000);
        claimed = await claimStalePending(database.db.withSchema("catalog"), now, now, 10);
      }
      return res;
    };
    const { qrCodes } = await catalogWith([reconcilerClaims], { graceMs: 60_000 });
    const accountId = await originAccount();
    const outcome = await qrCodes
      .createQrCode({ accountId, name: "x", destinationUrl: "https://example.com/" })
      .catch((e: unknown) => ConnectError.from(e));
    const mine = claimed.filter((row) => row.account_id === accountId);
    expect(mine).toHaveLength(1);
    // The reconciler's second step, as it runs it for what it claimed.
    const links = createClient(LinkService, local([linksModule]));
    await links.deleteLink({ accountId, linkId: mine[0]!.link_id!, purge: true }).catch(() => undefined);
    await database.db
      .withSchema("catalog")
      .deleteFrom("qr_codes")
      .where("id", "=", mine[0]!.id)
      .where("pending_operation", "=", "create")
      .execute();

    expect((outcome as ConnectError).code).toBe(Code.Unavailable);
    expect((await qrCodes.listQrCodes({ accountId })).qrCodes).toEqual([]);
    expect((await qrCodes.getCapacity({ accountId })).capacity?.qrCodesUsed).toBe(0n);
  });
});

describe("crash consistency between codes and links", () => {
  /**
   * A catalog whose process "dies" at one point of one call to the links service: the call never
   * returns, so nothing after it runs (no catch, no cleanup), exactly as after a SIGKILL.
   */
  async function crashingCatalog(method: string, when: "before" | "after") {
    let reached!: () => void;
    /** Resolves when the call has reached its crash point (and, "after", the links service has answered). */
    const crashed = new Promise<void>((resolve) => (reached = resolve));
    const hang: Interceptor = (next) => async (req) => {
      if (req.method.name !== method) return next(req);
      if (when === "after") await next(req);
      reached();
      return new Promise<never>(() => {});
    };
    return { ...(await catalogWith([hang])), crashed };
  }
  /** The next process: a catalog with a reconciler that takes every pending operation for abandoned. */
  const restarted = () => catalogWith();

  /** Codes, live links and capacity of the account agree; each code's link redirects where the code says. */
  async function expectConsistent(accountId: string, qrCodes: Awaited<ReturnType<typeof catalogWith>>["qrCodes"]) {
    const codes = (await qrCodes.listQrCodes({ accountId, pageSize: 100 })).qrCodes;
    const liveLinks = await database.db
      .withSchema("links")
      .selectFrom("links")
      .select(["id", "destination_url", "status"])
      .where("account_id", "=", accountId)
      .where("deleted_at", "is", null)
      .execute();
    expect(liveLinks.map((l) => l.id).sort()).toEqual(codes.map((c) => c.linkId).sort());
    expect((await qrCodes.getCapacity({ accountId })).capacity?.qrCodesUsed).toBe(BigInt(codes.length));
    for (const code of codes) {
      const link = liveLinks.find((l) => l.id === code.linkId)!;
      expect(link.destination_url).toBe(code.destinationUrl);
      expect(link.status).toBe(code.status === QrCodeStatus.PAUSED ? "paused" : "active");
    }
    return codes;
  }

  async function vanityDomain(accountId: string) {
    const dns = new MemoryDns();
    const links = await buildLinks({
      db: database.db,
      pageTokenSecret,
      shortLinkBaseUrl: "http://qr.test",
      lookupTxt: dns.lookupTxt,
    });
    const domains = createClient(DomainService, local([links]));
    const { domain } = await domains.createDomain({ accountId, hostname: `go-${randomUUID().slice(0, 8)}.example` });
    dns.setTxt(domain!.challengeRecordName, domain!.challengeRecordValue);
    await domains.verifyDomain({ accountId, domainId: domain!.id });
    return domain!.id;
  }

  for (const when of ["before", "after"] as const) {
    it(`undoes a create that crashed ${when} making its link, frees its vanity slug and its place`, async () => {
      const accountId = await originAccount();
      const domainId = await vanityDomain(accountId);
      const crashing = await crashingCatalog("CreateLink", when);
      const request = {
        accountId,
        name: "menu",
        destinationUrl: "https://example.com/menu",
        vanityDomainId: domainId,
        vanitySlug: "menu",
      };
      void crashing.qrCodes.createQrCode(request);
      await crashing.crashed;
      expect((await crashing.qrCodes.getCapacity({ accountId })).capacity?.qrCodesUsed).toBe(1n);
      const made = await database.db
        .withSchema("links")
        .selectFrom("links")
        .select("id")
        .where("account_id", "=", accountId)
        .execute();
      expect(made).toHaveLength(when === "after" ? 1 : 0);

      const next = await restarted();
      expect(await next.reconciler.runOnce()).toEqual({
        createsUndone: 1,
        updatesSettled: 0,
        deletesFinished: 0,
        failed: 0,
      });
      expect(await expectConsistent(accountId, next.qrCodes)).toEqual([]);
      // The retry succeeds: the slug the crashed create took is free again.
      expect((await next.qrCodes.createQrCode(request)).qrCode?.vanityUrl).toMatch(/\/menu$/);
      await expectConsistent(accountId, next.qrCodes);
    });

    it(`settles an update that crashed ${when} changing its link: the code shows what the link does`, async () => {
      const accountId = await originAccount();
      const first = await catalogWith();
      const { qrCode } = await first.qrCodes.createQrCode({
        accountId,
        name: "x",
        destinationUrl: "https://example.com/old",
      });
      const crashing = await crashingCatalog("UpdateLink", when);
      void crashing.qrCodes.updateQrCode({
        accountId,
        qrCodeId: qrCode!.id,
        destinationUrl: "https://example.com/new",
        status: QrCodeStatus.PAUSED,
      });
      await crashing.crashed;
      const row = await database.db
        .withSchema("catalog")
        .selectFrom("qr_codes")
        .select("pending_operation")
        .where("id", "=", qrCode!.id)
        .executeTakeFirst();
      expect(row?.pending_operation).toBe("update");

      const next = await restarted();
      expect(await next.reconciler.runOnce()).toMatchObject({ updatesSettled: 1, failed: 0 });
      const [code] = await expectConsistent(accountId, next.qrCodes);
      expect(code!.destinationUrl).toBe(when === "before" ? "https://example.com/old" : "https://example.com/new");
    });

    it(`finishes a delete that crashed ${when} deleting its link`, async () => {
      const accountId = await originAccount();
      const first = await catalogWith();
      const { qrCode } = await first.qrCodes.createQrCode({
        accountId,
        name: "x",
        destinationUrl: "https://example.com/",
      });
      const crashing = await crashingCatalog("DeleteLink", when);
      void crashing.qrCodes.deleteQrCode({ accountId, qrCodeId: qrCode!.id });
      await crashing.crashed;
      const row = await database.db
        .withSchema("catalog")
        .selectFrom("qr_codes")
        .select("pending_operation")
        .where("id", "=", qrCode!.id)
        .executeTakeFirst();
      expect(row?.pending_operation).toBe("delete");

      const next = await restarted();
      expect(await next.reconciler.runOnce()).toMatchObject({ deletesFinished: 1, failed: 0 });
      expect(await expectConsistent(accountId, next.qrCodes)).toEqual([]);
    });
  }

  it("leaves operations younger than the grace period to the call that is still making them", async () => {
    const accountId = await originAccount();
    const crashing = await crashingCatalog("CreateLink", "after");
    void crashing.qrCodes.createQrCode({ accountId, name: "slow", destinationUrl: "https://example.com/" });
    await crashing.crashed;
    const patient = await catalogWith([], { graceMs: 60_000 });
    expect(await patient.reconciler.runOnce()).toEqual({
      createsUndone: 0,
      updatesSettled: 0,
      deletesFinished: 0,
      failed: 0,
    });
    expect((await patient.qrCodes.getCapacity({ accountId })).capacity?.qrCodesUsed).toBe(1n);
    // Once the grace period is over, it is taken for abandoned.
    expect(await (await restarted()).reconciler.runOnce()).toMatchObject({ createsUndone: 1 });
  });

  it("keeps an operation it could not repair and repairs it on a later pass", async () => {
    const accountId = await originAccount();
    const crashing = await crashingCatalog("CreateLink", "after");
    void crashing.qrCodes.createQrCode({ accountId, name: "x", destinationUrl: "https://example.com/" });
    await crashing.crashed;
    const linksDown: Interceptor = () => async () => {
      throw new ConnectError("links is down", Code.Unavailable);
    };
    const isolated = await catalogWith([linksDown]);
    expect(await isolated.reconciler.runOnce()).toMatchObject({ createsUndone: 0, failed: 1 });
    const next = await restarted();
    expect(await next.reconciler.runOnce()).toMatchObject({ createsUndone: 1, failed: 0 });
    await expectConsistent(accountId, next.qrCodes);
  });
});

describe("idempotency keys", () => {
  const digest = (text: string) => new Uint8Array(createHash("sha256").update(text).digest());

  /** An origin account (100 codes) with 99 places taken. */
  async function accountWithOnePlaceLeft(): Promise<string> {
    const accountId = await originAccount();
    await insertCodesDirectly(accountId, 99);
    return accountId;
  }

  it("makes one code for a key however often and however concurrently the create is repeated, in one place of capacity", async () => {
    const { qrCodes } = await catalogWith();
    const accountId = await accountWithOnePlaceLeft();
    const idempotencyKey = { key: randomUUID(), fingerprint: digest("the last place") };
    const create = () =>
      qrCodes.createQrCode({ accountId, name: "Last", destinationUrl: "https://example.com/last", idempotencyKey });

    const results = await Promise.allSettled(Array.from({ length: 20 }, create));
    const made = results.filter((r) => r.status === "fulfilled").map((r) => r.value.qrCode!.id);
    expect(made.length).toBeGreaterThan(0);
    expect(new Set(made).size).toBe(1);
    // A repeat that meets the first create still making its link is told to come back, never given a second code.
    for (const r of results)
      if (r.status === "rejected") expect(reasonOf(r.reason)).toBe("idempotency_key_in_progress");

    // The account is full now, but a repeat is not a new create: it gets its code, not a capacity refusal.
    const repeat = await create();
    expect(repeat.qrCode!.id).toBe(made[0]);
    expect((await qrCodes.getCapacity({ accountId })).capacity).toMatchObject({
      qrCodesUsed: 100n,
      qrCodesLimit: 100n,
    });
    const other = await qrCodes
      .createQrCode({
        accountId,
        name: "Other",
        destinationUrl: "https://example.com/",
        idempotencyKey: { ...idempotencyKey, key: randomUUID() },
      })
      .catch((e: unknown) => e);
    expect(reasonOf(other)).toBe("qr_code_limit_reached");
  });

  it("answers a repeat while the first create is running with idempotency_key_in_progress, and with the code once it is done", async () => {
    let entered!: () => void;
    const inLinkCall = new Promise<void>((resolve) => (entered = resolve));
    let letGo!: () => void;
    const released = new Promise<void>((resolve) => (letGo = resolve));
    const holdCreateLink: Interceptor = (next) => async (req) => {
      if (req.method.name === "CreateLink") {
        entered();
        await released;
      }
      return next(req);
    };
    const slow = await catalogWith([holdCreateLink]);
    const { qrCodes } = await catalogWith();
    const accountId = await originAccount();
    const idempotencyKey = { key: "order-7", fingerprint: digest("order 7") };
    const request = { accountId, name: "Order 7", destinationUrl: "https://example.com/7", idempotencyKey };

    const first = slow.qrCodes.createQrCode(request);
    await inLinkCall;
    const busy = await qrCodes.createQrCode(request).catch((e: unknown) => ConnectError.from(e));
    expect([(busy as ConnectError).code, reasonOf(busy)]).toEqual([Code.Aborted, "idempotency_key_in_progress"]);
    letGo();
    const made = (await first).qrCode!;
    expect((await qrCodes.createQrCode(request)).qrCode).toMatchObject({ id: made.id, vanityUrl: made.vanityUrl });
    expect((await qrCodes.listQrCodes({ accountId })).qrCodes.map((code) => code.id)).toEqual([made.id]);
  });

  it("refuses a key first used for another request, keeps keys per account, and frees the key of a create that failed", async () => {
    const { qrCodes } = await catalogWith();
    const [accountId, otherAccountId] = [await originAccount(), await originAccount()];
    const key = "shared-key";
    const made = await qrCodes.createQrCode({
      accountId,
      name: "A",
      destinationUrl: "https://example.com/a",
      idempotencyKey: { key, fingerprint: digest("a") },
    });

    const reused = await qrCodes
      .createQrCode({
        accountId,
        name: "B",
        destinationUrl: "https://example.com/b",
        idempotencyKey: { key, fingerprint: digest("b") },
      })
      .catch((e: unknown) => ConnectError.from(e));
    expect([(reused as ConnectError).code, reasonOf(reused)]).toEqual([
      Code.FailedPrecondition,
      "idempotency_key_reused",
    ]);
    const elsewhere = await qrCodes.createQrCode({
      accountId: otherAccountId,
      name: "A",
      destinationUrl: "https://example.com/a",
      idempotencyKey: { key, fingerprint: digest("a") },
    });
    expect(elsewhere.qrCode!.id).not.toBe(made.qrCode!.id);

    // A create refused by the links service leaves no code, so its key names nothing: the retry runs again.
    const refusedKey = { key: "refused", fingerprint: digest("refused") };
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await qrCodes
        .createQrCode({ accountId, name: "R", destinationUrl: "javascript:alert(1)", idempotencyKey: refusedKey })
        .catch((e: unknown) => ConnectError.from(e));
      expect((refused as ConnectError).code).toBe(Code.InvalidArgument);
    }
    expect((await qrCodes.getCapacity({ accountId })).capacity?.qrCodesUsed).toBe(1n);
  });

  it("lets a key older than a day name a new create, as the edge forgets it then", async () => {
    const { qrCodes } = await catalogWith();
    const accountId = await originAccount();
    const idempotencyKey = { key: "daily-report", fingerprint: digest("report") };
    const request = { accountId, name: "Report", destinationUrl: "https://example.com/report", idempotencyKey };
    const first = (await qrCodes.createQrCode(request)).qrCode!;
    await database.db
      .withSchema("catalog")
      .updateTable("qr_codes")
      .set({ created_at: new Date(Date.now() - 25 * 3600 * 1000) })
      .where("id", "=", first.id)
      .execute();
    const second = (await qrCodes.createQrCode(request)).qrCode!;
    expect(second.id).not.toBe(first.id);
    expect((await qrCodes.createQrCode(request)).qrCode!.id).toBe(second.id);
  });

  it("checks the key it is given", async () => {
    const { qrCodes } = await catalogWith();
    const accountId = await originAccount();
    for (const idempotencyKey of [
      { key: "", fingerprint: digest("x") },
      { key: "k".repeat(301), fingerprint: digest("x") },
      { key: "tab\there", fingerprint: digest("x") },
      { key: "fine", fingerprint: new Uint8Array(31) },
    ]) {
      const error = await qrCodes
        .createQrCode({ accountId, name: "x", destinationUrl: "https://example.com/", idempotencyKey })
        .catch((e: unknown) => ConnectError.from(e));
      expect(reasonOf(error)).toBe("validation_error");
      expect(errorInfoOf(error as ConnectError)?.fieldViolations[0]?.field).toMatch(/^idempotency_key\./);
    }
    expect((await qrCodes.getCapacity({ accountId })).capacity?.qrCodesUsed).toBe(0n);
  });
});

describe("deleting a workspace while codes arrive", () => {
  /** An interceptor that holds calls of one method until released, and says when the first arrives. */
  function gate(method: string) {
    let release!: () => void;
    let arrived!: () => void;
    const opened = new Promise<void>((resolve) => (release = resolve));
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const interceptor: Interceptor = (next) => async (req) => {
      if (req.method.name === method) {
        arrived();
        await opened;
      }
      return next(req);
    };
    return { interceptor, reached, release };
  }

  const codesIn = (workspaceId: string) =>
    database.db
      .withSchema("catalog")
      .selectFrom("qr_codes")
      .select("id")
      .where("workspace_id", "=", workspaceId)
      .execute();

  it("refuses to delete a workspace whose code is still being created, and the code is created in it", async () => {
    const held = gate("CreateLink");
    const { qrCodes, workspaces } = await catalogWith([held.interceptor]);
    const accountId = await originAccount();
    const { workspace } = await workspaces.createWorkspace({ accountId, name: "Busy" });
    const creating = qrCodes.createQrCode({
      accountId,
      workspaceId: workspace!.id,
      name: "x",
      destinationUrl: "https://example.com/",
    });
    await held.reached;

    const refused = await workspaces
      .deleteWorkspace({ accountId, workspaceId: workspace!.id })
      .catch((e: unknown) => ConnectError.from(e));
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.FailedPrecondition);
    expect(errorInfoOf(refused as ConnectError)).toMatchObject({
      reason: "workspace_not_empty",
      metadata: { qr_code_count: "1" },
    });

    held.release();
    const { qrCode } = await creating;
    expect(qrCode!.workspaceId).toBe(workspace!.id);
    expect((await workspaces.getWorkspace({ accountId, workspaceId: workspace!.id })).workspace!.qrCodeCount).toBe(1n);
  });

  it("refuses a create whose workspace is deleted while it runs with NOT_FOUND, leaving no code and no place taken", async () => {
    // The design check comes after the create has looked the workspace up and before it reserves its place.
    const held = gate("ValidateDesign");
    const { qrCodes, workspaces } = await catalogWith([], { graceMs: 0 }, [held.interceptor]);
    const accountId = await originAccount();
    const { workspace } = await workspaces.createWorkspace({ accountId, name: "Going" });
    const creating = qrCodes
      .createQrCode({ accountId, workspaceId: workspace!.id, name: "x", destinationUrl: "https://example.com/" })
      .catch((e: unknown) => ConnectError.from(e));
    await held.reached;

    await workspaces.deleteWorkspace({ accountId, workspaceId: workspace!.id });
    held.release();
    const error = await creating;
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.NotFound);
    expect(errorInfoOf(error as ConnectError)?.metadata).toEqual({ resource: "workspace" });
    expect(await codesIn(workspace!.id)).toEqual([]);
    expect((await qrCodes.getCapacity({ accountId })).capacity?.qrCodesUsed).toBe(0n);
  });

  it("answers every create racing a delete with its code or NOT_FOUND, and the delete with success or workspace_not_empty", async () => {
    const { qrCodes, workspaces } = await catalogWith();
    const accountId = await originAccount();
    for (let round = 0; round < 3; round++) {
      const { workspace } = await workspaces.createWorkspace({ accountId, name: `Race ${round}` });
      const workspaceId = workspace!.id;
      const outcome = (call: Promise<unknown>) =>
        call.then(
          () => "ok",
          (e: unknown) => reasonOf(e) ?? Code[ConnectError.from(e).code],
        );
      const [deleted, ...created] = await Promise.all([
        outcome(workspaces.deleteWorkspace({ accountId, workspaceId })),
        ...Array.from({ length: 8 }, (_, i) =>
          outcome(
            qrCodes.createQrCode({ accountId, workspaceId, name: `c${i}`, destinationUrl: "https://example.com/" }),
          ),
        ),
      ]);
      expect(["ok", "workspace_not_empty"]).toContain(deleted);
      for (const answer of created) expect(["ok", "not_found"]).toContain(answer);
      const made = created.filter((answer) => answer === "ok").length;
      expect(await codesIn(workspaceId)).toHaveLength(made);
      // A deleted workspace holds nothing; a kept one holds every code whose create succeeded.
      if (deleted === "ok") expect(made).toBe(0);
      else
        expect((await workspaces.getWorkspace({ accountId, workspaceId })).workspace!.qrCodeCount).toBe(BigInt(made));
    }
  });

  it("refuses a move into a workspace deleted while it runs with NOT_FOUND, leaving the code where it was", async () => {
    // A move that also pauses the code calls the links service after looking the workspace up.
    const held = gate("UpdateLink");
    const { qrCodes, workspaces, reconciler } = await catalogWith([held.interceptor]);
    const accountId = await originAccount();
    const { workspace: home } = await workspaces.createWorkspace({ accountId, name: "Home" });
    const { workspace: target } = await workspaces.createWorkspace({ accountId, name: "Target" });
    const { qrCode } = await qrCodes.createQrCode({
      accountId,
      workspaceId: home!.id,
      name: "x",
      destinationUrl: "https://example.com/",
    });
    const moving = qrCodes
      .updateQrCode({ accountId, qrCodeId: qrCode!.id, workspaceId: target!.id, status: QrCodeStatus.PAUSED })
      .catch((e: unknown) => ConnectError.from(e));
    await held.reached;

    await workspaces.deleteWorkspace({ accountId, workspaceId: target!.id });
    held.release();
    const error = await moving;
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.NotFound);
    expect(errorInfoOf(error as ConnectError)?.metadata).toEqual({ resource: "workspace" });
    expect(await codesIn(target!.id)).toEqual([]);
    // The link was paused before the move was refused: the reconciler makes the code say so, in its old workspace.
    await reconciler.runOnce();
    const { qrCode: after } = await qrCodes.getQrCode({ accountId, qrCodeId: qrCode!.id });
    expect(after).toMatchObject({ workspaceId: home!.id, status: QrCodeStatus.PAUSED });
  });
});
