import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { DomainService, DomainState, LinkService } from "@qrplatform/api/links";
import { SubscriptionTier, TenancyAdminService } from "@qrplatform/api/tenancy";
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
import { buildLinks } from "@qrplatform/links";
import { createLogger, remoteTransport, serveGrpc, type GrpcServer } from "@qrplatform/platform";
import { buildTenancy } from "@qrplatform/tenancy";
import { MemoryDns } from "@qrplatform/testing/dns-server";

// Runs `qrctl domains` as a real subprocess against tenancy and links on one real gRPC port, as in
// the embedded platform; verification reads TXT records from memory (DNS itself is tested in links).

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let database: Database;
let dns: MemoryDns;
let server: GrpcServer;
let address: string;
let tenancyAdmin: ReturnType<typeof createClient<typeof TenancyAdminService>>;
let domains: ReturnType<typeof createClient<typeof DomainService>>;
let links: ReturnType<typeof createClient<typeof LinkService>>;
let adminDomains: ReturnType<typeof createClient<typeof DomainService>>;

function qrctl(args: string[], token = credentials.adminToken): Promise<QrctlResult> {
  return runQrctl(args, { env: { QRCTL_ADDRESS: address, QRCTL_TOKEN: token } });
}

const json = qrctlJson;

let hostCounter = 0;
const uniqueHost = (prefix: string) => `${prefix}-${++hostCounter}-${Date.now().toString(36)}.qrctl.example`;

async function newAccount(name: string): Promise<string> {
  return (await tenancyAdmin.createAccount({ name, subscriptionTier: SubscriptionTier.ORIGIN })).account!.id;
}

beforeAll(async () => {
  database = await openTestDatabase(MIGRATED_PLATFORM);
  dns = new MemoryDns();
  const logger = createLogger({ service: "test", level: "silent" });
  const tenancy = await buildTenancy({ db: database.db, pageTokenSecret: PAGE_TOKEN_SECRET });
  const linksModule = await buildLinks({
    db: database.db,
    shortLinkBaseUrl: "http://127.0.0.1:8080",
    lookupTxt: dns.lookupTxt,
    pageTokenSecret: PAGE_TOKEN_SECRET,
  });
  server = await serveGrpc({ modules: [tenancy, linksModule], credentials, logger, host: "127.0.0.1", port: 0 });
  address = `http://127.0.0.1:${server.port}`;
  tenancyAdmin = createClient(
    TenancyAdminService,
    remoteTransport({ baseUrl: address, token: credentials.adminToken }),
  );
  domains = createClient(DomainService, remoteTransport({ baseUrl: address, token: credentials.serviceToken }));
  links = createClient(LinkService, remoteTransport({ baseUrl: address, token: credentials.serviceToken }));
  adminDomains = createClient(DomainService, remoteTransport({ baseUrl: address, token: credentials.adminToken }));
});

afterAll(async () => {
  await server?.close();
  await database?.close();
});

describe.concurrent("qrctl domains", () => {
  it("adds a domain and prints its TXT challenge, as JSON and as text", async () => {
    const accountId = await newAccount("Domains add");
    const hostname = uniqueHost("Add");
    const added = json(
      await qrctl(["domains", "add", "--account", accountId, "--hostname", `${hostname.toUpperCase()}.`, "--json"]),
    );
    expect(added.id).toMatch(UUID);
    expect(added).toMatchObject({
      account_id: accountId,
      hostname: hostname.toLowerCase(),
      status: "pending",
      verification: { type: "TXT", name: `_qr-platform-challenge.${hostname.toLowerCase()}` },
      failure_reason: null,
      verified_at: null,
    });
    // The REST API's words for the same domain: `status`, never `state`; the record under `verification`.
    expect(added).not.toHaveProperty("state");
    expect(added.verification.value).toMatch(/^qr-platform-verification=[A-Za-z0-9_-]{43}$/);
    const stored = await domains.getDomain({ accountId, domainId: added.id });
    expect(stored.domain?.challengeRecordValue).toBe(added.verification.value);

    const text = await qrctl(["domains", "add", "--account", accountId, "--hostname", uniqueHost("text")]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/_qr-platform-challenge\.text-.*TXT\s+"qr-platform-verification=/);
    expect(text.stdout).toMatch(/Status\s+pending\n/);
    expect(text.stdout).toMatch(/TXT name\s+_qr-platform-challenge\.text-/);
    expect(text.stdout).toMatch(/TXT value\s+qr-platform-verification=/);
    expect(text.stdout).toMatch(/qrctl domains verify [0-9a-f-]{36}/);
  });

  it("reports an unknown account, a bad hostname and a taken hostname with the platform's reason", async () => {
    const unknown = await qrctl([
      "domains",
      "add",
      "--account",
      "00000000-0000-4000-8000-000000000000",
      "--hostname",
      uniqueHost("orphan"),
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toMatch(/account was not found.*NOT_FOUND/);

    const accountId = await newAccount("Domains errors");
    const bad = await qrctl(["domains", "add", "--account", accountId, "--hostname", "127.0.0.1"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/hostname: must be a DNS name/);
    expect(bad.stderr).toMatch(/validation_error/);

    const hostname = uniqueHost("taken");
    await domains.createDomain({ accountId: await newAccount("Owner"), hostname });
    const taken = await qrctl(["domains", "add", "--account", accountId, "--hostname", hostname]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/ALREADY_EXISTS, reason domain_taken/);
  });

  it("lists every account's domains, or one account's", async () => {
    const first = await newAccount("List A");
    const second = await newAccount("List B");
    const a = (await domains.createDomain({ accountId: first, hostname: uniqueHost("list-a") })).domain!;
    const b = (await domains.createDomain({ accountId: second, hostname: uniqueHost("list-b") })).domain!;

    const all = json(await qrctl(["domains", "list", "--page-size", "1", "--json"])).domains.map(
      (d: { id: string }) => d.id,
    );
    expect(all).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(new Set(all).size).toBe(all.length);

    const mine = json(await qrctl(["domains", "list", "--account", first, "--json"])).domains;
    expect(mine.map((d: { id: string }) => d.id)).toEqual([a.id]);

    const table = await qrctl(["domains", "list", "--account", second]);
    expect(table.code).toBe(0);
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+HOSTNAME\s+ACCOUNT\s+STATUS/);
    expect(table.stdout).toContain(b.hostname);
    expect(table.stdout).not.toContain(a.hostname);
  });

  it("shows how the cluster serves each domain: a column in the table, the whole report in JSON", async () => {
    const accountId = await newAccount("Serving");
    const [served, issuing, unreported] = await Promise.all(
      ["served", "issuing", "unreported"].map(
        async (prefix) => (await domains.createDomain({ accountId, hostname: uniqueHost(prefix) })).domain!,
      ),
    );
    const expires = Date.parse("2027-05-01T00:00:00.000Z");
    await adminDomains.reportDomainServing({
      domainId: served!.id,
      serving: {
        serving: true,
        routeAdmitted: true,
        certificateReady: true,
        certificateExpireTime: timestampFromMs(expires),
        reason: "Serving",
      },
    });
    await adminDomains.reportDomainServing({
      domainId: issuing!.id,
      serving: {
        serving: false,
        routeAdmitted: true,
        certificateReady: false,
        reason: "Issuing",
        message: "Waiting for the ACME challenge.",
      },
    });

    const listed = json(await qrctl(["domains", "list", "--account", accountId, "--json"])).domains;
    const byId = new Map(listed.map((d: { id: string }) => [d.id, d]));
    expect(byId.get(served!.id)).toMatchObject({
      serving: {
        status: "serving",
        route_admitted: true,
        certificate_ready: true,
        certificate_expires_at: "2027-05-01T00:00:00.000Z",
        reason: "Serving",
        message: null,
        reported_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    });
    expect(byId.get(issuing!.id)).toMatchObject({
      serving: {
        status: "not_serving",
        route_admitted: true,
        certificate_ready: false,
        certificate_expires_at: null,
        reason: "Issuing",
        message: "Waiting for the ACME challenge.",
      },
    });
    expect(byId.get(unreported!.id)).toMatchObject({ serving: null });

    const table = await qrctl(["domains", "list", "--account", accountId]);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+HOSTNAME\s+ACCOUNT\s+STATUS\s+SERVING\s+CREATED\s+VERIFIED$/);
    const row = (domain: { id: string }) => lines.find((line) => line.startsWith(domain.id));
    expect(row(served!)).toMatch(/\spending\s+serving\s/);
    expect(row(issuing!)).toMatch(/\spending\s+not_serving \(Issuing\)\s/);
    expect(row(unreported!)).toMatch(/\spending\s+-\s/);
  });

  it("verifies a domain by id alone: exit 1 with the reason while the record is missing, 0 once it is there", async () => {
    const accountId = await newAccount("Verify");
    const domain = (await domains.createDomain({ accountId, hostname: uniqueHost("verify") })).domain!;

    const missing = await qrctl(["domains", "verify", domain.id, "--json"]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({
      id: domain.id,
      status: "failed",
      failure_reason: expect.stringMatching(/NXDOMAIN/),
    });
    expect(missing.stderr).toMatch(/is not verified: .*NXDOMAIN/);

    dns.setTxt(domain.challengeRecordName, "qr-platform-verification=wrong");
    const wrong = await qrctl(["domains", "verify", domain.id]);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toMatch(/Domain not verified/);
    expect(wrong.stdout).toMatch(/do not include the expected value/);

    dns.setTxt(domain.challengeRecordName, domain.challengeRecordValue);
    const verified = json(await qrctl(["domains", "verify", domain.id, "--json"]));
    expect(verified).toMatchObject({ id: domain.id, status: "verified", failure_reason: null });
    expect((await domains.getDomain({ accountId, domainId: domain.id })).domain?.state).toBe(DomainState.VERIFIED);
  });

  it("removes a domain by id alone, but not while a live QR code uses it", async () => {
    const accountId = await newAccount("Remove");
    const domain = (await domains.createDomain({ accountId, hostname: uniqueHost("remove") })).domain!;
    dns.setTxt(domain.challengeRecordName, domain.challengeRecordValue);
    await domains.verifyDomain({ accountId, domainId: domain.id });
    const { link } = await links.createLink({
      accountId,
      destinationUrl: "https://example.com/",
      vanityDomainId: domain.id,
      vanitySlug: "menu",
    });

    const inUse = await qrctl(["domains", "remove", domain.id]);
    expect(inUse.code).toBe(1);
    expect(inUse.stderr).toMatch(/FAILED_PRECONDITION, reason domain_in_use/);

    await links.deleteLink({ accountId, linkId: link!.id });
    const removed = json(await qrctl(["domains", "remove", domain.id, "--json"]));
    expect(removed).toEqual({ id: domain.id, hostname: domain.hostname, account_id: accountId, removed: true });
    const listed = json(await qrctl(["domains", "list", "--account", accountId, "--json"]));
    expect(listed.domains).toEqual([]);

    const again = await qrctl(["domains", "remove", domain.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/NOT_FOUND/);
  });

  it("needs the admin credential to act without an account", async () => {
    const result = await qrctl(["domains", "list"], credentials.serviceToken);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/account_id: is required/);
  });
});
