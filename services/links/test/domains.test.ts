import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { DomainServingSchema, DomainState, type DomainServing } from "@qrplatform/api/links";
import { ConfigError } from "@qrplatform/platform";
import { resolverTxtLookup } from "../src/server.js";
import { closedUdpPort, MemoryDns } from "@qrplatform/testing/dns-server";
import { errorOf } from "./support/errors.js";
import { startLinks, type LinksStack } from "./support/links-stack.js";

let stack: LinksStack;
beforeAll(async () => {
  stack = await startLinks();
});
afterAll(() => stack?.close());

const newAccount = () => randomUUID();
let counter = 0;
const uniqueHost = (prefix = "go") => `${prefix}-${++counter}-${randomUUID().slice(0, 6)}.domains.example`;

describe("registering domains", () => {
  it("normalises the hostname and returns the TXT challenge", async () => {
    const accountId = newAccount();
    const { domain } = await stack.domains.createDomain({ accountId, hostname: "  Links.Bücher.Example. " });
    expect(domain).toMatchObject({
      accountId,
      hostname: "links.xn--bcher-kva.example",
      state: DomainState.PENDING,
      challengeRecordName: "_qr-platform-challenge.links.xn--bcher-kva.example",
      failureReason: "",
    });
    expect(domain?.challengeRecordValue).toMatch(/^qr-platform-verification=[A-Za-z0-9_-]{43}$/);
    expect(domain?.verifyTime).toBeUndefined();
    expect(domain?.lastCheckTime).toBeUndefined();
    expect((await stack.domains.getDomain({ accountId, domainId: domain!.id })).domain).toEqual(domain);
  });

  it("gives every domain its own challenge token", async () => {
    const accountId = newAccount();
    const a = await stack.domains.createDomain({ accountId, hostname: uniqueHost() });
    const b = await stack.domains.createDomain({ accountId, hostname: uniqueHost() });
    expect(a.domain?.challengeRecordValue).not.toBe(b.domain?.challengeRecordValue);
  });

  it("refuses hostnames that are not public DNS names, naming hostname", async () => {
    const accountId = newAccount();
    for (const hostname of [
      "127.0.0.1",
      "::1",
      "localhost",
      "printer.local",
      "intranet",
      "-bad.example.com",
      `${"a".repeat(64)}.example.com`,
      "https://go.example.com",
      "",
      "s.qr.example",
    ]) {
      const error = await errorOf(stack.domains.createDomain({ accountId, hostname }));
      expect(error.code, hostname).toBe(Code.InvalidArgument);
      expect(error.reason).toBe("validation_error");
      expect(error.fields.map((f) => f.field)).toEqual(["hostname"]);
    }
  });

  it("keeps hostnames unique across all accounts, whatever their spelling", async () => {
    const hostname = uniqueHost("taken");
    await stack.domains.createDomain({ accountId: newAccount(), hostname });
    for (const [accountId, spelling] of [
      [newAccount(), hostname],
      [newAccount(), `${hostname.toUpperCase()}.`],
    ] as const) {
      const error = await errorOf(stack.domains.createDomain({ accountId, hostname: spelling }));
      expect(error).toMatchObject({ code: Code.AlreadyExists, reason: "domain_taken" });
    }
  });

  it("requires an account, even from the admin credential", async () => {
    for (const client of [stack.domains, stack.adminDomains]) {
      const error = await errorOf(client.createDomain({ accountId: "", hostname: uniqueHost() }));
      expect(error).toMatchObject({
        code: Code.InvalidArgument,
        fields: [{ field: "account_id", reason: "required" }],
      });
    }
  });
});

describe("listing domains", () => {
  it("pages through an account's domains, oldest first, with tokens bound to the account", async () => {
    const accountId = newAccount();
    const created: { id: string; createdMs: number }[] = [];
    for (let i = 0; i < 5; i++) {
      const { domain } = await stack.domains.createDomain({ accountId, hostname: uniqueHost("list") });
      created.push({ id: domain!.id, createdMs: timestampMs(domain!.createTime!) });
    }
    // Creation time, then id: two domains made in the same millisecond come in id order.
    const inListOrder = created
      .sort((a, b) => a.createdMs - b.createdMs || (a.id < b.id ? -1 : 1))
      .map((domain) => domain.id);
    await stack.domains.createDomain({ accountId: newAccount(), hostname: uniqueHost("other") });

    const seen: string[] = [];
    let pageToken = "";
    do {
      const page = await stack.domains.listDomains({ accountId, pageSize: 2, pageToken });
      expect(page.domains.length).toBeLessThanOrEqual(2);
      seen.push(...page.domains.map((d) => d.id));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(seen).toEqual(inListOrder);

    const first = await stack.domains.listDomains({ accountId, pageSize: 1 });
    const replay = await errorOf(
      stack.domains.listDomains({ accountId: newAccount(), pageSize: 1, pageToken: first.nextPageToken }),
    );
    expect(replay).toMatchObject({ code: Code.InvalidArgument, fields: [{ field: "page_token" }] });
    expect(await errorOf(stack.domains.listDomains({ accountId, pageSize: 101 }))).toMatchObject({
      code: Code.InvalidArgument,
    });
  });

  it("lists every account's domains for the admin credential only", async () => {
    const mine = (await stack.domains.createDomain({ accountId: newAccount(), hostname: uniqueHost("admin") })).domain!;
    const theirs = (await stack.domains.createDomain({ accountId: newAccount(), hostname: uniqueHost("admin") }))
      .domain!;
    const ids: string[] = [];
    let pageToken = "";
    do {
      const page = await stack.adminDomains.listDomains({ accountId: "", pageSize: 7, pageToken });
      ids.push(...page.domains.map((d) => d.id));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(ids).toEqual(expect.arrayContaining([mine.id, theirs.id]));
    expect(new Set(ids).size).toBe(ids.length);

    // The service credential must always name an account, on every RPC.
    for (const call of [
      () => stack.domains.listDomains({ accountId: "" }),
      () => stack.domains.getDomain({ accountId: "", domainId: mine.id }),
      () => stack.domains.verifyDomain({ accountId: "", domainId: mine.id }),
      () => stack.domains.deleteDomain({ accountId: "", domainId: mine.id }),
    ]) {
      expect(await errorOf(call())).toMatchObject({
        code: Code.InvalidArgument,
        fields: [{ field: "account_id", reason: "required" }],
      });
    }
    // The admin acts on any domain by id alone.
    expect((await stack.adminDomains.getDomain({ accountId: "", domainId: theirs.id })).domain?.hostname).toBe(
      theirs.hostname,
    );
  });
});

describe("verifying domains", () => {
  it("verifies a domain whose TXT record is present, among other records", async () => {
    const accountId = newAccount();
    const { domain } = await stack.domains.createDomain({ accountId, hostname: uniqueHost("verify") });
    stack.dns.setTxt(domain!.challengeRecordName, "v=spf1 -all", domain!.challengeRecordValue);
    const { domain: verified } = await stack.domains.verifyDomain({ accountId, domainId: domain!.id });
    expect(verified).toMatchObject({ state: DomainState.VERIFIED, failureReason: "" });
    expect(verified?.verifyTime).toBeDefined();
    expect(verified?.lastCheckTime).toBeDefined();

    // Verifying again re-checks and keeps it verified, with its first verification time.
    const again = await stack.domains.verifyDomain({ accountId, domainId: domain!.id });
    expect(again.domain?.state).toBe(DomainState.VERIFIED);
    expect(again.domain?.verifyTime).toEqual(verified?.verifyTime);
  });

  it("accepts a challenge split into several TXT strings", async () => {
    const accountId = newAccount();
    const { domain } = await stack.domains.createDomain({ accountId, hostname: uniqueHost("split") });
    const value = domain!.challengeRecordValue;
    stack.dns.txt.set(domain!.challengeRecordName, [[value.slice(0, 20), value.slice(20)]]);
    expect((await stack.domains.verifyDomain({ accountId, domainId: domain!.id })).domain?.state).toBe(
      DomainState.VERIFIED,
    );
  });

  it("fails with a reason when the name does not exist, has no TXT record, or holds the wrong value", async () => {
    const accountId = newAccount();
    const verify = async (prepare: (name: string) => void) => {
      const { domain } = await stack.domains.createDomain({ accountId, hostname: uniqueHost("fail") });
      prepare(domain!.challengeRecordName);
      return (await stack.domains.verifyDomain({ accountId, domainId: domain!.id })).domain!;
    };
    const absent = await verify(() => {});
    expect(absent.state).toBe(DomainState.FAILED);
    expect(absent.failureReason).toMatch(/NXDOMAIN/);
    expect(absent.verifyTime).toBeUndefined();

    const noTxt = await verify((name) => stack.dns.existing.add(name));
    expect(noTxt.state).toBe(DomainState.FAILED);
    expect(noTxt.failureReason).toMatch(/no TXT record/);

    const wrong = await verify((name) => stack.dns.setTxt(name, "qr-platform-verification=not-the-token"));
    expect(wrong.state).toBe(DomainState.FAILED);
    expect(wrong.failureReason).toContain('"qr-platform-verification=not-the-token"');
  });

  it("moves a failed domain to verified once the record appears, and a verified one to failed once it is gone", async () => {
    const accountId = newAccount();
    const { domain } = await stack.domains.createDomain({ accountId, hostname: uniqueHost("flip") });
    expect((await stack.domains.verifyDomain({ accountId, domainId: domain!.id })).domain?.state).toBe(
      DomainState.FAILED,
    );
    stack.dns.setTxt(domain!.challengeRecordName, domain!.challengeRecordValue);
    const verified = (await stack.domains.verifyDomain({ accountId, domainId: domain!.id })).domain!;
    expect(verified).toMatchObject({ state: DomainState.VERIFIED, failureReason: "" });
    stack.dns.txt.delete(domain!.challengeRecordName);
    const lost = (await stack.domains.verifyDomain({ accountId, domainId: domain!.id })).domain!;
    expect(lost.state).toBe(DomainState.FAILED);
    expect(lost.verifyTime).toBeUndefined();
  });

  it("fails a pending domain on a timeout, but keeps a verified one verified and says the check did not happen", async () => {
    const accountId = newAccount();
    const { domain: pending } = await stack.domains.createDomain({ accountId, hostname: uniqueHost("slow") });
    stack.dns.txt.set(pending!.challengeRecordName, "silent");
    const timedOut = (await stack.domains.verifyDomain({ accountId, domainId: pending!.id })).domain!;
    expect(timedOut.state).toBe(DomainState.FAILED);
    expect(timedOut.failureReason).toMatch(/timed out/);

    const verified = await stack.verifiedDomain(accountId, uniqueHost("slow-verified"));
    stack.dns.txt.set(verified.challengeRecordName, "silent");
    const error = await errorOf(stack.domains.verifyDomain({ accountId, domainId: verified.id }));
    expect(error).toMatchObject({ code: Code.Unavailable, reason: "dns_unavailable" });
    const after = (await stack.domains.getDomain({ accountId, domainId: verified.id })).domain;
    expect(after).toEqual(verified);
  });

  it("answers UNAVAILABLE and changes nothing when the resolver cannot be reached", async () => {
    const unreachable = await startLinks({
      lookupTxt: resolverTxtLookup({ server: `127.0.0.1:${await closedUdpPort()}`, timeoutMs: 300 }),
    });
    try {
      const accountId = newAccount();
      const { domain } = await unreachable.domains.createDomain({ accountId, hostname: uniqueHost("nodns") });
      const error = await errorOf(unreachable.domains.verifyDomain({ accountId, domainId: domain!.id }));
      expect(error).toMatchObject({ code: Code.Unavailable, reason: "dns_unavailable" });
      expect((await unreachable.domains.getDomain({ accountId, domainId: domain!.id })).domain).toEqual(domain);
    } finally {
      await unreachable.close();
    }
  });
});

describe("the TXT lookup", () => {
  it("is the one the service is given, so a test can answer from memory", async () => {
    const dns = new MemoryDns();
    const inMemory = await startLinks({ lookupTxt: dns.lookupTxt });
    try {
      const accountId = newAccount();
      const { domain } = await inMemory.domains.createDomain({ accountId, hostname: uniqueHost("memory") });
      dns.setTxt(domain!.challengeRecordName, domain!.challengeRecordValue);
      expect((await inMemory.domains.verifyDomain({ accountId, domainId: domain!.id })).domain?.state).toBe(
        DomainState.VERIFIED,
      );
      dns.txt.set(domain!.challengeRecordName, "silent");
      expect(await errorOf(inMemory.domains.verifyDomain({ accountId, domainId: domain!.id }))).toMatchObject({
        code: Code.Unavailable,
      });
    } finally {
      await inMemory.close();
    }
  });

  it("refuses a resolver address that is not an IP address, as a configuration error", () => {
    expect(() => resolverTxtLookup({ server: "dns.example" })).toThrow(ConfigError);
    expect(() => resolverTxtLookup({ server: "10.0.0.2:53" })).not.toThrow();
  });
});

describe("removing domains", () => {
  it("refuses while a live link uses it, then removes it and frees the hostname for anyone", async () => {
    const accountId = newAccount();
    const hostname = uniqueHost("remove");
    const domain = await stack.verifiedDomain(accountId, hostname);
    const { link } = await stack.links.createLink({
      accountId,
      destinationUrl: "https://example.com/",
      vanityDomainId: domain.id,
      vanitySlug: "menu",
    });
    const inUse = await errorOf(stack.domains.deleteDomain({ accountId, domainId: domain.id }));
    expect(inUse).toMatchObject({
      code: Code.FailedPrecondition,
      reason: "domain_in_use",
      metadata: { domain_id: domain.id, links: "1" },
    });
    expect((await stack.domains.getDomain({ accountId, domainId: domain.id })).domain?.id).toBe(domain.id);

    // A deleted link no longer holds the domain.
    await stack.links.deleteLink({ accountId, linkId: link!.id });
    expect(await stack.domains.deleteDomain({ accountId, domainId: domain.id })).toMatchObject({ domainId: domain.id });
    for (const call of [
      () => stack.domains.getDomain({ accountId, domainId: domain.id }),
      () => stack.domains.verifyDomain({ accountId, domainId: domain.id }),
      () => stack.domains.deleteDomain({ accountId, domainId: domain.id }),
    ]) {
      expect(await errorOf(call())).toMatchObject({ code: Code.NotFound, metadata: { resource: "domain" } });
    }
    expect((await stack.domains.listDomains({ accountId })).domains).toEqual([]);

    const newcomer = newAccount();
    const again = await stack.domains.createDomain({ accountId: newcomer, hostname });
    expect(again.domain).toMatchObject({ hostname, accountId: newcomer, state: DomainState.PENDING });
    expect(again.domain?.id).not.toBe(domain.id);
  });

  it("never leaves a live link on a removed domain when creation and removal race", async () => {
    const accountId = newAccount();
    const domain = await stack.verifiedDomain(accountId, uniqueHost("race"));
    const creations = Array.from({ length: 5 }, (_, i) =>
      stack.links.createLink({
        accountId,
        destinationUrl: "https://example.com/",
        vanityDomainId: domain.id,
        vanitySlug: `race-${i}`,
      }),
    );
    const removal = stack.domains.deleteDomain({ accountId, domainId: domain.id });
    const [removed, ...created] = await Promise.allSettled([removal, ...creations]);
    const live = await stack.database.db
      .selectFrom("links.links")
      .select("id")
      .where("domain_id", "=", domain.id)
      .where("deleted_at", "is", null)
      .execute();
    expect(live).toHaveLength(created.filter((r) => r.status === "fulfilled").length);
    if (removed!.status === "fulfilled") expect(live).toEqual([]);
    else expect((await errorOf(Promise.reject(removed!.reason))).reason).toBe("domain_in_use");
  });

  it("lets the admin remove a domain of any account by id alone", async () => {
    const accountId = newAccount();
    const { domain } = await stack.domains.createDomain({ accountId, hostname: uniqueHost("admin-rm") });
    await stack.adminDomains.deleteDomain({ accountId: "", domainId: domain!.id });
    expect(await errorOf(stack.domains.getDomain({ accountId, domainId: domain!.id }))).toMatchObject({
      code: Code.NotFound,
    });
  });
});

describe("account isolation", () => {
  it("answers not_found for another account's domain on every RPC, and changes nothing", async () => {
    const owner = newAccount();
    const domain = await stack.verifiedDomain(owner, uniqueHost("iso"));
    const intruder = newAccount();
    for (const call of [
      () => stack.domains.getDomain({ accountId: intruder, domainId: domain.id }),
      () => stack.domains.verifyDomain({ accountId: intruder, domainId: domain.id }),
      () => stack.domains.deleteDomain({ accountId: intruder, domainId: domain.id }),
    ]) {
      expect(await errorOf(call())).toMatchObject({
        code: Code.NotFound,
        reason: "not_found",
        metadata: { resource: "domain" },
      });
    }
    // A malformed id names nothing: refused before any query.
    expect(await errorOf(stack.domains.getDomain({ accountId: owner, domainId: "not-a-uuid" }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "validation_error",
    });
    expect(await errorOf(stack.domains.getDomain({ accountId: "not-a-uuid", domainId: domain.id }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "validation_error",
    });
    expect((await stack.domains.listDomains({ accountId: intruder })).domains).toEqual([]);
    expect((await stack.domains.getDomain({ accountId: owner, domainId: domain.id })).domain).toEqual(domain);
  });
});

describe("reporting serving state", () => {
  const issuing = {
    serving: false,
    routeAdmitted: true,
    certificateReady: false,
    reason: "Issuing",
    message: "Waiting for the ACME challenge.",
  };
  const expiry = Date.parse("2027-03-01T12:00:00.123Z");
  const serving = {
    serving: true,
    routeAdmitted: true,
    certificateReady: true,
    // Nanoseconds below the millisecond are not kept.
    certificateExpireTime: { ...timestampFromMs(expiry), nanos: 123_456_789 },
    reason: "Serving",
    message: "",
  };
  /** The row's version: a write, even of equal values, changes it. */
  const rowVersion = async (id: string) =>
    (
      await stack.database.db
        .selectFrom("links.domains")
        .select(sql<string>`xmin::text`.as("xmin"))
        .where("id", "=", id)
        .executeTakeFirstOrThrow()
    ).xmin;

  it("records what the operator reports; tenants read it with the domain, and update_time stays", async () => {
    const accountId = newAccount();
    const domain = await stack.verifiedDomain(accountId, uniqueHost("serving"));
    expect(domain.serving).toBeUndefined();

    const before = Date.now();
    const { domain: reported } = await stack.adminDomains.reportDomainServing({
      domainId: domain.id,
      // Whatever report_time says, the service sets it.
      serving: { ...issuing, reportTime: timestampFromMs(0) },
    });
    expect(reported).toEqual({ ...domain, serving: expect.objectContaining(issuing) });
    expect(reported?.serving?.certificateExpireTime).toBeUndefined();
    expect(Number(reported!.serving!.reportTime!.seconds) * 1000).toBeGreaterThanOrEqual(
      Math.floor(before / 1000) * 1000,
    );

    expect((await stack.domains.getDomain({ accountId, domainId: domain.id })).domain).toEqual(reported);
    expect((await stack.domains.listDomains({ accountId })).domains).toEqual([reported]);

    const { domain: served } = await stack.adminDomains.reportDomainServing({ domainId: domain.id, serving });
    expect(served?.serving).toMatchObject({
      serving: true,
      routeAdmitted: true,
      certificateReady: true,
      reason: "Serving",
      message: "",
    });
    expect(served?.serving?.certificateExpireTime).toEqual(timestampFromMs(expiry));
    expect(served?.updateTime).toEqual(domain.updateTime);
  });

  it("changes nothing when the state reported is the one stored", async () => {
    const accountId = newAccount();
    const domain = await stack.verifiedDomain(accountId, uniqueHost("same"));
    const first = (await stack.adminDomains.reportDomainServing({ domainId: domain.id, serving })).domain!;
    const version = await rowVersion(domain.id);

    // The same state, its expiry spelled with other nanoseconds of the same millisecond.
    const again = (
      await stack.adminDomains.reportDomainServing({
        domainId: domain.id,
        serving: { ...serving, certificateExpireTime: { ...timestampFromMs(expiry), nanos: 123_000_001 } },
      })
    ).domain!;
    expect(again).toEqual(first);
    expect(await rowVersion(domain.id)).toBe(version);

    // Any difference is a new state, reported now.
    const renewed = (
      await stack.adminDomains.reportDomainServing({
        domainId: domain.id,
        serving: { ...serving, certificateExpireTime: timestampFromMs(expiry + 90 * 86_400_000) },
      })
    ).domain!;
    expect(await rowVersion(domain.id)).not.toBe(version);
    expect(renewed.serving?.certificateExpireTime).toEqual(timestampFromMs(expiry + 90 * 86_400_000));
  });

  it("is for the admin credential only", async () => {
    const accountId = newAccount();
    const domain = await stack.verifiedDomain(accountId, uniqueHost("not-admin"));
    const refused = await errorOf(stack.domains.reportDomainServing({ domainId: domain.id, serving }));
    expect(refused).toMatchObject({ code: Code.PermissionDenied, reason: "admin_credential_required" });
    expect(refused.message).toMatch(/ReportDomainServing requires the admin credential/);
    expect((await stack.domains.getDomain({ accountId, domainId: domain.id })).domain?.serving).toBeUndefined();
  });

  it("names every invalid field", async () => {
    const domain = await stack.verifiedDomain(newAccount(), uniqueHost("invalid"));
    const report = (fields: Partial<DomainServing>): DomainServing =>
      create(DomainServingSchema, { ...issuing, ...fields });
    const cases: [object, [string, string][]][] = [
      [{ domainId: "", serving: report({}) }, [["domain_id", "required"]]],
      [{ domainId: "nope", serving: report({}) }, [["domain_id", "invalid_format"]]],
      [{ domainId: domain.id }, [["serving", "required"]]],
      [{ domainId: domain.id, serving: report({ reason: "" }) }, [["serving.reason", "required"]]],
      [
        { domainId: domain.id, serving: report({ reason: "certificate_issuing" }) },
        [["serving.reason", "invalid_format"]],
      ],
      [{ domainId: domain.id, serving: report({ reason: "Not Verified" }) }, [["serving.reason", "invalid_format"]]],
      [{ domainId: domain.id, serving: report({ reason: `R${"a".repeat(64)}` }) }, [["serving.reason", "too_long"]]],
      [{ domainId: domain.id, serving: report({ reason: "Serving" }) }, [["serving.reason", "invalid_value"]]],
      [
        { domainId: domain.id, serving: report({ serving: true, reason: "Serving" }) },
        [["serving.serving", "invalid_value"]],
      ],
      [{ domainId: domain.id, serving: report({ message: "x".repeat(1025) }) }, [["serving.message", "too_long"]]],
      [
        { domainId: domain.id, serving: report({ message: "two\nlines" }) },
        [["serving.message", "invalid_characters"]],
      ],
      [
        { domainId: domain.id, serving: report({ certificateExpireTime: timestampFromMs(-1000) }) },
        [["serving.certificate_expire_time", "out_of_range"]],
      ],
      [
        { domainId: domain.id, serving: report({ reason: "x", message: "x".repeat(1025) }) },
        [
          ["serving.reason", "invalid_format"],
          ["serving.message", "too_long"],
        ],
      ],
      // What every request is checked for (ids, text) is refused at the door, before the fields' own rules.
      [
        { domainId: "nope", serving: report({ reason: "x", message: "\u0007" }) },
        [
          ["domain_id", "invalid_format"],
          ["serving.message", "invalid_characters"],
        ],
      ],
    ];
    for (const [i, [request, fields]] of cases.entries()) {
      const error = await errorOf(stack.adminDomains.reportDomainServing(request));
      expect(error.code, `case ${i}`).toBe(Code.InvalidArgument);
      expect(
        error.fields.map((f) => [f.field, f.reason]),
        `case ${i}`,
      ).toEqual(fields);
    }
    expect(
      (await stack.adminDomains.getDomain({ accountId: "", domainId: domain.id })).domain?.serving,
    ).toBeUndefined();
  });

  it("answers NOT_FOUND for an unknown or a removed domain", async () => {
    const accountId = newAccount();
    const { domain } = await stack.domains.createDomain({ accountId, hostname: uniqueHost("gone") });
    await stack.domains.deleteDomain({ accountId, domainId: domain!.id });
    for (const domainId of [domain!.id, randomUUID()]) {
      const error = await errorOf(stack.adminDomains.reportDomainServing({ domainId, serving: issuing }));
      expect(error).toMatchObject({ code: Code.NotFound, metadata: { resource: "domain" } });
    }
  });
});
