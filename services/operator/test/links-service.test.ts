// The operator against the real links service (its database, hostname rules and DNS verification),
// reached over gRPC with the admin credential: its WatchDomains stream, its full lists and the
// serving reports it stores.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client } from "@connectrpc/connect";
import { DomainService, DomainState } from "@qrplatform/api/links";
import type { Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { credentials, MIGRATED_PLATFORM, PAGE_TOKEN_SECRET } from "@qrplatform/testing";
import { buildLinks } from "@qrplatform/links";
import { createLogger, remoteTransport, serveGrpc, type GrpcServer } from "@qrplatform/platform";
import { MemoryDns } from "@qrplatform/testing/dns-server";
import { Cluster, eventually, INGRESSES } from "./support/cluster.js";
import { ACCOUNT, OTHER_ACCOUNT } from "./support/objects.js";

let database: Database;
let dns: MemoryDns;
let server: GrpcServer;
let links: Client<typeof DomainService>;
let cluster: Cluster;
beforeAll(async () => {
  database = await openTestDatabase(MIGRATED_PLATFORM);
  dns = new MemoryDns();
  const linksModule = await buildLinks({
    db: database.db,
    shortLinkBaseUrl: "http://127.0.0.1:8080",
    lookupTxt: dns.lookupTxt,
    pageTokenSecret: PAGE_TOKEN_SECRET,
  });
  server = await serveGrpc({
    modules: [linksModule],
    credentials,
    logger: createLogger({ service: "test", level: "silent" }),
    host: "127.0.0.1",
    port: 0,
  });
  links = createClient(
    DomainService,
    remoteTransport({ baseUrl: `http://127.0.0.1:${server.port}`, token: credentials.adminToken }),
  );
  cluster = await Cluster.start();
});

afterAll(async () => {
  await cluster?.close();
  await server?.close();
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
    const replica = await cluster.startOperator({
      deps: {
        domains: links,
        periods: {
          fullResyncMs: 200,
          reverifyMs: 86_400_000,
          pendingCheckMs: 3_600_000,
          unverifiedTtlMs: 7 * 86_400_000,
          recheckMs: 300,
        },
      },
    });
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
    expect(cluster.customDomain("go.links.example")?.status?.verification?.challengeRecordValue).toBe(
      added.challengeRecordValue,
    );
    dns.txt.set(added.challengeRecordName, [[added.challengeRecordValue]]);
    expect((await links.verifyDomain({ accountId: "", domainId: added.id })).domain?.state).toBe(DomainState.VERIFIED);
    await cluster.serve("go.links.example");
    await eventually(
      async () => (await links.getDomain({ accountId: "", domainId: added.id })).domain?.serving?.reason,
      "Serving",
    );

    // Removed through DomainService (qrctl domains delete): the CR and what it made go.
    await links.deleteDomain({ accountId: "", domainId: added.id });
    await eventually(() => cluster.customDomain("go.links.example"), undefined);
    expect(cluster.get(INGRESSES, "go.links.example")).toBeUndefined();
  });
});
