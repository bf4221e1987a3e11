// The catalog's QR codes against real tenancy, links and rendering modules on one test database.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { QrCodeService, QrCodeStatus, WorkspaceService } from "@qrplatform/api/catalog";
import { DomainService, LinkService } from "@qrplatform/api/links";
import { SubscriptionTier, TenancyAdminService } from "@qrplatform/api/tenancy";
import type { Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { buildLinks } from "@qrplatform/links";
import { createLogger, errorInfoOf, inProcessTransport, type GrpcModule } from "@qrplatform/platform";
import { buildRendering } from "@qrplatform/rendering";
import { buildTenancy } from "@qrplatform/tenancy";
import { TestDnsServer } from "../../links/test/support/dns-server.js";
import type { ReconcilerOptions } from "../src/qr-codes/qr-code-reconciler.js";
import { buildCatalog } from "../src/server.js";

const credentials = { serviceToken: "s".repeat(32), adminToken: "a".repeat(32) };
const logger = createLogger({ service: "test", level: "silent" });
const pageTokenSecret = "p".repeat(32);

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
async function catalogWith(linkInterceptors: Interceptor[] = [], reconciler: Partial<ReconcilerOptions> = { graceMs: 0 }) {
  const module = await buildCatalog({
    db: database.db,
    pageTokenSecret,
    logger,
    transports: { tenancy: local([tenancyModule]), links: local([linksModule], linkInterceptors), rendering: local([renderingModule]) },
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
      expect((await qrCodes.getCapacity({ accountId })).capacity).toMatchObject({ qrCodesUsed: 100n, qrCodesLimit: 100n });

      // Deleting frees the place for the next round.
      const winner = (admitted[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof create>>>).value.qrCode!;
      await qrCodes.deleteQrCode({ accountId, qrCodeId: winner.id });
    }
  }, 120_000);
});

describe("custom-link capacity", () => {
  it("limits codes on custom domains to the plan's links figure, apart from the QR-code capacity", async () => {
    const dns = await new TestDnsServer().start();
    try {
      const links = await buildLinks({ db: database.db, pageTokenSecret, shortLinkBaseUrl: "http://qr.test", dnsResolver: dns.address });
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

      // 999 codes already on the custom domain (written directly: 999 creates would only slow the test).
      await database.db
        .withSchema("catalog")
        .insertInto("qr_codes")
        .values(
          Array.from({ length: 999 }, () => ({
            id: randomUUID(),
            account_id: accountId,
            name: "existing",
            destination_url: "https://example.com/",
            status: "active",
            link_id: randomUUID(),
            vanity_domain_id: domain!.id,
            vanity_url: "https://go.scale.example/x",
            canonical_url: "http://qr.test/x",
            design: "{}",
          })),
        )
        .execute();

      const vanity = (slug: string) =>
        qrCodes.createQrCode({ accountId, name: slug, destinationUrl: "https://example.com/", vanityDomainId: domain!.id, vanitySlug: slug });
      expect((await vanity("last-one")).qrCode?.vanityUrl).toBe("https://go.scale.example/last-one");
      const refused = await vanity("one-too-many").catch((e: unknown) => ConnectError.from(e));
      expect(reasonOf(refused)).toBe("link_limit_reached");
      expect(errorInfoOf(refused as ConnectError)?.metadata).toEqual({ limit: "1000", used: "1000" });
      // Codes on the short domain still fit: the QR-code capacity (5,000) is separate.
      expect((await qrCodes.createQrCode({ accountId, name: "plain", destinationUrl: "https://example.com/" })).qrCode).toBeDefined();
    } finally {
      await dns.close();
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
    const error = await catalog.qrCodes.createQrCode({ accountId, name: "x", destinationUrl: "https://example.com/" }).catch((e: unknown) => e);
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
    const bad = await qrCodes.createQrCode({ accountId, name: "x", destinationUrl: "javascript:alert(1)" }).catch((e: unknown) => e);
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
        await database.db.withSchema("catalog").deleteFrom("qr_codes").where("pending_operation", "=", "create").execute();
      }
      return res;
    };
    const { qrCodes } = await catalogWith([dropReservation]);
    const accountId = await originAccount();
    await expect(qrCodes.createQrCode({ accountId, name: "x", destinationUrl: "https://example.com/" })).rejects.toThrow();
    expect(createdLinkId).toBeDefined();
    const links = createClient(LinkService, local([linksModule]));
    const lookup = await links.getLink({ accountId, linkId: createdLinkId! }).catch((e: unknown) => ConnectError.from(e));
    expect((lookup as ConnectError).code).toBe(Code.NotFound);
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
    const dns = await new TestDnsServer().start();
    const links = await buildLinks({ db: database.db, pageTokenSecret, shortLinkBaseUrl: "http://qr.test", dnsResolver: dns.address });
    const domains = createClient(DomainService, local([links]));
    const { domain } = await domains.createDomain({ accountId, hostname: `go-${randomUUID().slice(0, 8)}.example` });
    dns.setTxt(domain!.challengeRecordName, domain!.challengeRecordValue);
    await domains.verifyDomain({ accountId, domainId: domain!.id });
    await dns.close();
    return domain!.id;
  }

  for (const when of ["before", "after"] as const) {
    it(`undoes a create that crashed ${when} making its link, frees its vanity slug and its place`, async () => {
      const accountId = await originAccount();
      const domainId = await vanityDomain(accountId);
      const crashing = await crashingCatalog("CreateLink", when);
      const request = { accountId, name: "menu", destinationUrl: "https://example.com/menu", vanityDomainId: domainId, vanitySlug: "menu" };
      void crashing.qrCodes.createQrCode(request);
      await crashing.crashed;
      expect((await crashing.qrCodes.getCapacity({ accountId })).capacity?.qrCodesUsed).toBe(1n);
      const made = await database.db.withSchema("links").selectFrom("links").select("id").where("account_id", "=", accountId).execute();
      expect(made).toHaveLength(when === "after" ? 1 : 0);

      const next = await restarted();
      expect(await next.reconciler.runOnce()).toEqual({ createsUndone: 1, updatesSettled: 0, deletesFinished: 0, failed: 0 });
      expect(await expectConsistent(accountId, next.qrCodes)).toEqual([]);
      // The retry succeeds: the slug the crashed create took is free again.
      expect((await next.qrCodes.createQrCode(request)).qrCode?.vanityUrl).toMatch(/\/menu$/);
      await expectConsistent(accountId, next.qrCodes);
    });

    it(`settles an update that crashed ${when} changing its link: the code shows what the link does`, async () => {
      const accountId = await originAccount();
      const first = await catalogWith();
      const { qrCode } = await first.qrCodes.createQrCode({ accountId, name: "x", destinationUrl: "https://example.com/old" });
      const crashing = await crashingCatalog("UpdateLink", when);
      void crashing.qrCodes.updateQrCode({ accountId, qrCodeId: qrCode!.id, destinationUrl: "https://example.com/new", status: QrCodeStatus.PAUSED });
      await crashing.crashed;
      const row = await database.db.withSchema("catalog").selectFrom("qr_codes").select("pending_operation").where("id", "=", qrCode!.id).executeTakeFirst();
      expect(row?.pending_operation).toBe("update");

      const next = await restarted();
      expect(await next.reconciler.runOnce()).toMatchObject({ updatesSettled: 1, failed: 0 });
      const [code] = await expectConsistent(accountId, next.qrCodes);
      expect(code!.destinationUrl).toBe(when === "before" ? "https://example.com/old" : "https://example.com/new");
    });

    it(`finishes a delete that crashed ${when} deleting its link`, async () => {
      const accountId = await originAccount();
      const first = await catalogWith();
      const { qrCode } = await first.qrCodes.createQrCode({ accountId, name: "x", destinationUrl: "https://example.com/" });
      const crashing = await crashingCatalog("DeleteLink", when);
      void crashing.qrCodes.deleteQrCode({ accountId, qrCodeId: qrCode!.id });
      await crashing.crashed;
      const row = await database.db.withSchema("catalog").selectFrom("qr_codes").select("pending_operation").where("id", "=", qrCode!.id).executeTakeFirst();
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
    expect(await patient.reconciler.runOnce()).toEqual({ createsUndone: 0, updatesSettled: 0, deletesFinished: 0, failed: 0 });
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
