// The catalog's QR codes against real tenancy, links and rendering modules on one test database.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { QrCodeService, WorkspaceService } from "@qrplatform/api/catalog";
import { DomainService, LinkService } from "@qrplatform/api/links";
import { SubscriptionTier, TenancyAdminService } from "@qrplatform/api/tenancy";
import type { Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { buildLinks } from "@qrplatform/links";
import { createLogger, errorInfoOf, inProcessTransport, type GrpcModule } from "@qrplatform/platform";
import { buildRendering } from "@qrplatform/rendering";
import { buildTenancy } from "@qrplatform/tenancy";
import { TestDnsServer } from "../../links/test/support/dns-server.js";
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

/** A catalog whose calls to the links service pass through `linkInterceptors`, to inject failures. */
async function catalogWith(linkInterceptors: Interceptor[] = []) {
  const module = await buildCatalog({
    db: database.db,
    pageTokenSecret,
    logger,
    transports: { tenancy: local([tenancyModule]), links: local([linksModule], linkInterceptors), rendering: local([renderingModule]) },
  });
  return {
    qrCodes: createClient(QrCodeService, local([module])),
    workspaces: createClient(WorkspaceService, local([module])),
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
  it("leaves no code and uses no capacity when the links service fails", async () => {
    const failCreateLink: Interceptor = (next) => async (req) => {
      if (req.method.name === "CreateLink") throw new ConnectError("links is down", Code.Unavailable);
      return next(req);
    };
    const { qrCodes } = await catalogWith([failCreateLink]);
    const accountId = await originAccount();
    const error = await qrCodes.createQrCode({ accountId, name: "x", destinationUrl: "https://example.com/" }).catch((e: unknown) => e);
    expect(ConnectError.from(error).code).toBe(Code.Unavailable);
    expect((await qrCodes.listQrCodes({ accountId })).qrCodes).toEqual([]);
    expect((await qrCodes.getCapacity({ accountId })).capacity?.qrCodesUsed).toBe(0n);
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
    // The link is made, then the account vanishes between reservation and completion: simulated by
    // deleting the reservation row right after the link exists.
    const dropReservation: Interceptor = (next) => async (req) => {
      const res = await next(req);
      if (req.method.name === "CreateLink") {
        createdLinkId = (res.message as { link?: { id: string } }).link?.id;
        await database.db.withSchema("catalog").deleteFrom("qr_codes").where("link_id", "is", null).execute();
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
