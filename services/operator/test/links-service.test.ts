// The operator against the real links service (its database, hostname rules and DNS verification),
// reached over gRPC with the admin credential. The links service may not implement WatchDomains and
// ReportDomainServing yet: the operator then lives on its periodic full lists, and the serving reports
// are kept by a thin layer in front of it that answers only what links leaves unimplemented.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { clone, create } from "@bufbuild/protobuf";
import { DomainSchema, DomainService, DomainServingSchema, DomainState, type Domain } from "@qrplatform/api/links";
import type { Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { buildLinks } from "@qrplatform/links";
import { createLogger, remoteTransport, serveGrpc, type GrpcServer } from "@qrplatform/platform";
import { TestDnsServer } from "../../links/test/support/dns-server.js";
import { Cluster, eventually, INGRESSES } from "./support/cluster.js";
import { ACCOUNT, OTHER_ACCOUNT } from "./support/objects.js";

const credentials = { serviceToken: "s".repeat(32), adminToken: "a".repeat(32) };

let database: Database;
let dns: TestDnsServer;
let server: GrpcServer;
let links: Client<typeof DomainService>;
let cluster: Cluster;
/** Serving states kept in front of a links service that does not store them yet. */
const servingKept = new Map<string, Domain>();

/** DomainService as the operator sees it: the real one, with what it leaves unimplemented filled in. */
function domainService(): Client<typeof DomainService> {
  const overlay = (domain: Domain | undefined) => (domain && servingKept.has(domain.id) ? { ...domain, serving: servingKept.get(domain.id)!.serving } : domain);
  return createClient(
    DomainService,
    createRouterTransport((router) =>
      router.service(DomainService, {
        createDomain: (req) => links.createDomain(req),
        getDomain: async (req) => ({ domain: overlay((await links.getDomain(req)).domain) }),
        listDomains: async (req) => {
          const page = await links.listDomains(req);
          return { domains: page.domains.map((domain) => overlay(domain)!), nextPageToken: page.nextPageToken };
        },
        verifyDomain: (req) => links.verifyDomain(req),
        deleteDomain: (req) => links.deleteDomain(req),
        watchDomains: (req, context) => links.watchDomains(req, { signal: context.signal, timeoutMs: 0 }),
        reportDomainServing: async (req) => {
          try {
            return await links.reportDomainServing(req);
          } catch (error) {
            if (ConnectError.from(error).code !== Code.Unimplemented) throw error;
            const domain = clone(DomainSchema, (await links.getDomain({ accountId: "", domainId: req.domainId })).domain!);
            domain.serving = create(DomainServingSchema, req.serving);
            servingKept.set(domain.id, domain);
            return { domain };
          }
        },
      }),
    ),
  );
}

beforeAll(async () => {
  database = await openTestDatabase();
  dns = await new TestDnsServer().start();
  const linksModule = await buildLinks({
    db: database.db,
    shortLinkBaseUrl: "http://127.0.0.1:8080",
    dnsResolver: dns.address,
    dnsTimeoutMs: 300,
    pageTokenSecret: "p".repeat(32),
  });
  server = await serveGrpc({ modules: [linksModule], credentials, logger: createLogger({ service: "test", level: "silent" }), host: "127.0.0.1", port: 0 });
  links = createClient(DomainService, remoteTransport({ baseUrl: `http://127.0.0.1:${server.port}`, token: credentials.adminToken }));
  cluster = await Cluster.start();
});

afterAll(async () => {
  await cluster?.close();
  await server?.close();
  await dns?.close();
  await database?.close();
});

describe("the operator with the links service", () => {
  it("projects, verifies through DNS, provisions and reports; refuses what the links service's rules refuse", async () => {
    // Before the operator starts: an SRE's CR for a hostname another account holds, and malformed ones.
    const theirs = (await links.createDomain({ accountId: OTHER_ACCOUNT, hostname: "taken.links.example" })).domain!;
    const kubectl = cluster.kubectl();
    await kubectl.create("taken.links.example", ACCOUNT);
    await kubectl.create("10.0.0.1", ACCOUNT);
    await kubectl.create("intranet", ACCOUNT);
    await kubectl.create("printer.local", ACCOUNT);
    const replica = await cluster.startOperator({ deps: { domains: domainService(), periods: { fullResyncMs: 200, reverifyMs: 86_400_000, pendingCheckMs: 3_600_000, unverifiedTtlMs: 7 * 86_400_000, recheckMs: 300 } } });
    await eventually(() => replica.operator.isLeader, true);

    await eventually(() => cluster.reasonOf("taken.links.example"), "False/HostnameTaken");
    for (const name of ["10.0.0.1", "intranet", "printer.local"]) {
      await eventually(() => cluster.reasonOf(name, "Verified"), "False/InvalidHostname");
    }
    expect(cluster.condition("intranet", "Verified")?.message).toMatch(/at least two labels/);
    expect((await links.getDomain({ accountId: "", domainId: theirs.id })).domain?.accountId).toBe(OTHER_ACCOUNT);

    // A tenant's domain, as qrctl adds it: projected with its challenge, then verified through DNS.
    const added = (await links.createDomain({ accountId: ACCOUNT, hostname: "go.links.example" })).domain!;
    await eventually(() => cluster.reasonOf("go.links.example"), "False/PendingVerification");
    expect(cluster.customDomain("go.links.example")?.status?.verification?.challengeRecordValue).toBe(added.challengeRecordValue);
    dns.txt.set(added.challengeRecordName, [[added.challengeRecordValue]]);
    expect((await links.verifyDomain({ accountId: "", domainId: added.id })).domain?.state).toBe(DomainState.VERIFIED);
    await cluster.serve("go.links.example");
    await eventually(async () => (await domainService().getDomain({ accountId: "", domainId: added.id })).domain?.serving?.reason, "Serving");

    // Removed through DomainService (qrctl domains delete): the CR and what it made go.
    await links.deleteDomain({ accountId: "", domainId: added.id });
    await eventually(() => cluster.customDomain("go.links.example"), undefined);
    expect(cluster.get(INGRESSES, "go.links.example")).toBeUndefined();
  });
});
