import { randomUUID } from "node:crypto";
import { domainToUnicode } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { LinkStatus } from "@qrplatform/api/links";
import { errorOf } from "./support/errors.js";
import { SHORT_BASE, SHORT_HOST, startLinks, type LinksStack } from "./support/links-stack.js";

let stack: LinksStack;
beforeAll(async () => {
  stack = await startLinks();
});
afterAll(() => stack?.close());

const newAccount = () => randomUUID();

describe("creating links", () => {
  it("generates an 8-character slug and absolute canonical and vanity URLs", async () => {
    const accountId = newAccount();
    const { link } = await stack.links.createLink({
      accountId,
      destinationUrl: "https://example.com/landing",
      queryParameters: { utm_source: "qr" },
    });
    expect(link?.slug).toMatch(/^[23456789abcdefghjkmnpqrstuvwxyz]{8}$/);
    expect(link).toMatchObject({
      accountId,
      destinationUrl: "https://example.com/landing",
      queryParameters: { utm_source: "qr" },
      status: LinkStatus.ACTIVE,
      canonicalUrl: `${SHORT_BASE}/${link!.slug}`,
      vanityUrl: `${SHORT_BASE}/${link!.slug}`,
    });
    expect(link?.vanityDomainId).toBeUndefined();
    expect(link?.vanitySlug).toBeUndefined();
    const read = await stack.links.getLink({ accountId, linkId: link!.id });
    expect(read.link).toEqual(link);
  });

  it("gives every link of many its own slug", async () => {
    const accountId = newAccount();
    const created = await Promise.all(
      Array.from({ length: 200 }, () => stack.links.createLink({ accountId, destinationUrl: "https://example.com/" })),
    );
    const slugs = created.map((c) => c.link!.slug);
    expect(new Set(slugs).size).toBe(200);
    for (const slug of slugs) expect(slug).toMatch(/^[23456789abcdefghjkmnpqrstuvwxyz]{8}$/);
  });

  it("refuses bad destination URLs, naming destination_url", async () => {
    const accountId = newAccount();
    const bad = [
      "javascript:alert(1)",
      "data:text/html;base64,PHNjcmlwdD4=",
      "https://example.com/\r\nLocation: https://evil.example",
      "https://example.com/a\tb",
      "https://user:secret@example.com/",
      `https://example.com/${"x".repeat(2048)}`,
      "not a url",
      "",
    ];
    for (const destinationUrl of bad) {
      const error = await errorOf(stack.links.createLink({ accountId, destinationUrl }));
      expect(error.code, destinationUrl).toBe(Code.InvalidArgument);
      expect(error.reason).toBe("validation_error");
      expect(error.fields.map((f) => f.field)).toEqual(["destination_url"]);
    }
  });

  it("refuses a malformed account id", async () => {
    const error = await errorOf(stack.links.createLink({ accountId: "acct", destinationUrl: "https://example.com/" }));
    expect(error).toMatchObject({
      code: Code.InvalidArgument,
      fields: [{ field: "account_id", reason: "invalid_format" }],
    });
  });

  it("gives the link the caller's id, once: a taken id (live or deleted) or a malformed one is refused", async () => {
    const accountId = newAccount();
    const linkId = randomUUID();
    const { link } = await stack.links.createLink({
      accountId,
      linkId: linkId.toUpperCase(),
      destinationUrl: "https://example.com/",
    });
    expect(link?.id).toBe(linkId);
    expect(
      await errorOf(stack.links.createLink({ accountId, linkId, destinationUrl: "https://example.com/" })),
    ).toMatchObject({
      code: Code.AlreadyExists,
      reason: "link_exists",
    });
    await stack.links.deleteLink({ accountId, linkId });
    expect(
      (
        await errorOf(
          stack.links.createLink({ accountId: newAccount(), linkId, destinationUrl: "https://example.com/" }),
        )
      ).reason,
    ).toBe("link_exists");
    expect(
      await errorOf(stack.links.createLink({ accountId, linkId: "link-1", destinationUrl: "https://example.com/" })),
    ).toMatchObject({
      code: Code.InvalidArgument,
      fields: [{ field: "link_id", reason: "invalid_format" }],
    });
  });

  it("retries when a generated slug is taken, by a live or a deleted link", async () => {
    // A scripted generator, so collisions happen on purpose.
    const offered: string[] = [];
    const forced = await startLinks({ generateSlug: () => offered.shift() ?? "never222" });
    try {
      const accountId = newAccount();
      offered.push("aaaa2345");
      await forced.links.createLink({ accountId, destinationUrl: "https://example.com/live" });
      offered.push("bbbb2345");
      const deleted = await forced.links.createLink({ accountId, destinationUrl: "https://example.com/deleted" });
      await forced.links.deleteLink({ accountId, linkId: deleted.link!.id });

      offered.push("aaaa2345", "bbbb2345", "cccc2345");
      const third = await forced.links.createLink({ accountId, destinationUrl: "https://example.com/third" });
      expect(third.link?.slug).toBe("cccc2345");
      expect(offered).toEqual([]);

      // When every attempt collides, the call fails cleanly instead of looping.
      offered.push(...Array<string>(5).fill("cccc2345"));
      const error = await errorOf(forced.links.createLink({ accountId, destinationUrl: "https://example.com/fourth" }));
      expect(error).toMatchObject({ code: Code.Aborted, reason: "slug_conflict" });
      expect(offered).toEqual([]);
    } finally {
      await forced.close();
    }
  });
});

describe("vanity slugs", () => {
  it("creates a link with a vanity slug on a verified domain, stored in lower case", async () => {
    const accountId = newAccount();
    const domain = await stack.verifiedDomain(accountId, "go.vanity-ok.example");
    const { link } = await stack.links.createLink({
      accountId,
      destinationUrl: "https://example.com/spring",
      vanityDomainId: domain.id,
      vanitySlug: "Spring-Sale",
    });
    expect(link).toMatchObject({
      vanityDomainId: domain.id,
      vanitySlug: "spring-sale",
      vanityUrl: "https://go.vanity-ok.example/spring-sale",
      canonicalUrl: `${SHORT_BASE}/${link!.slug}`,
    });
    expect((await stack.links.getLink({ accountId, linkId: link!.id })).link?.vanityUrl).toBe(
      "https://go.vanity-ok.example/spring-sale",
    );
  });

  it("uses the configured scheme for custom domains", async () => {
    const plain = await startLinks({ customDomainScheme: "http", shortLinkBaseUrl: "http://127.0.0.1:8080/" });
    try {
      const accountId = newAccount();
      const domain = await plain.verifiedDomain(accountId, "go.plain.example");
      const { link } = await plain.links.createLink({
        accountId,
        destinationUrl: "https://example.com/",
        vanityDomainId: domain.id,
        vanitySlug: "menu",
      });
      expect(link?.vanityUrl).toBe("http://go.plain.example/menu");
      expect(link?.canonicalUrl).toBe(`http://127.0.0.1:8080/${link!.slug}`);
    } finally {
      await plain.close();
    }
  });

  it("needs both the domain and the slug, naming the missing one", async () => {
    const accountId = newAccount();
    const domain = await stack.verifiedDomain(accountId);
    const noSlug = await errorOf(
      stack.links.createLink({ accountId, destinationUrl: "https://example.com/", vanityDomainId: domain.id }),
    );
    expect(noSlug).toMatchObject({
      code: Code.InvalidArgument,
      reason: "validation_error",
      fields: [{ field: "vanity_slug", reason: "required" }],
    });
    const noDomain = await errorOf(
      stack.links.createLink({ accountId, destinationUrl: "https://example.com/", vanitySlug: "menu" }),
    );
    expect(noDomain).toMatchObject({
      code: Code.InvalidArgument,
      reason: "validation_error",
      fields: [{ field: "vanity_domain_id", reason: "required" }],
    });
  });

  it("refuses malformed and reserved slugs", async () => {
    const accountId = newAccount();
    const domain = await stack.verifiedDomain(accountId);
    const attempt = (vanitySlug: string) =>
      errorOf(
        stack.links.createLink({
          accountId,
          destinationUrl: "https://example.com/",
          vanityDomainId: domain.id,
          vanitySlug,
        }),
      );
    for (const slug of ["ab", "-menu", "menu-", "me nu", "a".repeat(65), "menü"]) {
      expect(await attempt(slug), slug).toMatchObject({
        code: Code.InvalidArgument,
        reason: "validation_error",
        fields: [{ field: "vanity_slug", reason: "invalid_format" }],
      });
    }
    for (const slug of [
      "api",
      "Docs",
      "healthz",
      "readyz",
      "admin",
      "static",
      "assets",
      "favicon.ico",
      "robots.txt",
      ".well-known",
    ]) {
      expect(await attempt(slug), slug).toMatchObject({
        code: Code.InvalidArgument,
        reason: "validation_error",
        fields: [{ field: "vanity_slug", reason: "reserved" }],
      });
    }
  });

  it("answers not_found for an unknown or foreign domain, with resource domain", async () => {
    const accountId = newAccount();
    const foreign = await stack.verifiedDomain(newAccount());
    for (const vanityDomainId of [randomUUID(), foreign.id]) {
      const error = await errorOf(
        stack.links.createLink({
          accountId,
          destinationUrl: "https://example.com/",
          vanityDomainId,
          vanitySlug: "menu",
        }),
      );
      expect(error).toMatchObject({ code: Code.NotFound, reason: "not_found", metadata: { resource: "domain" } });
    }
  });

  it("refuses a domain that is not verified, pending or failed", async () => {
    const accountId = newAccount();
    const { domain: pending } = await stack.domains.createDomain({ accountId, hostname: "go.pending-vanity.example" });
    const { domain: failed } = await stack.domains.createDomain({ accountId, hostname: "go.failed-vanity.example" });
    await stack.domains.verifyDomain({ accountId, domainId: failed!.id });
    for (const domain of [pending!, failed!]) {
      const error = await errorOf(
        stack.links.createLink({
          accountId,
          destinationUrl: "https://example.com/",
          vanityDomainId: domain.id,
          vanitySlug: "menu",
        }),
      );
      expect(error).toMatchObject({ code: Code.FailedPrecondition, reason: "domain_not_verified" });
    }
  });

  it("answers slug_taken for a slug used on the domain by a live or a deleted link, in any case", async () => {
    const accountId = newAccount();
    const domain = await stack.verifiedDomain(accountId);
    const create = (vanitySlug: string) =>
      stack.links.createLink({
        accountId,
        destinationUrl: "https://example.com/",
        vanityDomainId: domain.id,
        vanitySlug,
      });
    await create("live-one");
    const gone = await create("gone-one");
    await stack.links.deleteLink({ accountId, linkId: gone.link!.id });
    for (const slug of ["live-one", "LIVE-ONE", "gone-one"]) {
      expect(await errorOf(create(slug)), slug).toMatchObject({ code: Code.AlreadyExists, reason: "slug_taken" });
    }
    // The same slug on another domain is a different link.
    const other = await stack.verifiedDomain(accountId);
    const elsewhere = await stack.links.createLink({
      accountId,
      destinationUrl: "https://example.com/",
      vanityDomainId: other.id,
      vanitySlug: "live-one",
    });
    expect(elsewhere.link?.vanitySlug).toBe("live-one");
  });

  it("lets two concurrent requests for one slug produce exactly one link", async () => {
    const accountId = newAccount();
    const domain = await stack.verifiedDomain(accountId);
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () =>
        stack.links.createLink({
          accountId,
          destinationUrl: "https://example.com/",
          vanityDomainId: domain.id,
          vanitySlug: "race",
        }),
      ),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results.filter((r) => r.status === "rejected")) {
      expect((await errorOf(Promise.reject((r as PromiseRejectedResult).reason))).reason).toBe("slug_taken");
    }
  });

  it("frees the slugs of a purged link, which deletion never does", async () => {
    const accountId = newAccount();
    const domain = await stack.verifiedDomain(accountId);
    const create = () =>
      stack.links.createLink({
        accountId,
        destinationUrl: "https://example.com/",
        vanityDomainId: domain.id,
        vanitySlug: "undo-me",
      });
    const first = await create();
    await stack.links.deleteLink({ accountId, linkId: first.link!.id, purge: true });
    expect(await errorOf(stack.links.getLink({ accountId, linkId: first.link!.id }))).toMatchObject({
      code: Code.NotFound,
    });
    const second = await create();
    expect(second.link?.vanitySlug).toBe("undo-me");
    // Purging another account's link finds nothing.
    expect(
      await errorOf(stack.links.deleteLink({ accountId: newAccount(), linkId: second.link!.id, purge: true })),
    ).toMatchObject({
      code: Code.NotFound,
    });
  });
});

describe("updating and deleting", () => {
  it("changes the destination and the status, and leaves updated_at alone when nothing changes", async () => {
    const accountId = newAccount();
    const { link } = await stack.links.createLink({ accountId, destinationUrl: "https://example.com/old" });
    const same = await stack.links.updateLink({ accountId, linkId: link!.id });
    expect(same.link).toEqual(link);
    const changed = await stack.links.updateLink({
      accountId,
      linkId: link!.id,
      destinationUrl: "http://example.org/new",
      status: LinkStatus.PAUSED,
    });
    expect(changed.link).toMatchObject({
      destinationUrl: "http://example.org/new",
      status: LinkStatus.PAUSED,
      slug: link!.slug,
    });
    const resumed = await stack.links.updateLink({ accountId, linkId: link!.id, status: LinkStatus.ACTIVE });
    expect(resumed.link).toMatchObject({ destinationUrl: "http://example.org/new", status: LinkStatus.ACTIVE });
  });

  it("validates updates", async () => {
    const accountId = newAccount();
    const { link } = await stack.links.createLink({ accountId, destinationUrl: "https://example.com/" });
    const error = await errorOf(
      stack.links.updateLink({
        accountId,
        linkId: link!.id,
        destinationUrl: "javascript:alert(1)",
        status: LinkStatus.UNSPECIFIED,
      }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.fields.map((f) => f.field).sort()).toEqual(["destination_url", "status"]);
    expect((await stack.links.getLink({ accountId, linkId: link!.id })).link?.destinationUrl).toBe(
      "https://example.com/",
    );
  });

  it("deletes once: afterwards the link is not_found everywhere", async () => {
    const accountId = newAccount();
    const { link } = await stack.links.createLink({ accountId, destinationUrl: "https://example.com/" });
    expect(await stack.links.deleteLink({ accountId, linkId: link!.id })).toMatchObject({ linkId: link!.id });
    for (const call of [
      () => stack.links.getLink({ accountId, linkId: link!.id }),
      () => stack.links.updateLink({ accountId, linkId: link!.id, status: LinkStatus.PAUSED }),
      () => stack.links.deleteLink({ accountId, linkId: link!.id }),
    ]) {
      expect(await errorOf(call())).toMatchObject({
        code: Code.NotFound,
        reason: "not_found",
        metadata: { resource: "link" },
      });
    }
    // The row stays, holding the slug.
    const stored = await stack.database.db
      .selectFrom("links.links")
      .select(["slug", "deleted_at"])
      .where("id", "=", link!.id)
      .executeTakeFirst();
    expect(stored?.slug).toBe(link!.slug);
    expect(stored?.deleted_at).toBeInstanceOf(Date);
  });
});

describe("destinations on hosts whose links we answer", () => {
  /** Asserts that CreateLink refuses the destination, and that UpdateLink refuses it for an existing link. */
  async function expectRefused(links: LinksStack, accountId: string, destinationUrl: string) {
    const refusal = {
      code: Code.InvalidArgument,
      reason: "validation_error",
      fields: [{ field: "destination_url", reason: "short_link_destination" }],
    };
    expect(await errorOf(links.links.createLink({ accountId, destinationUrl })), destinationUrl).toMatchObject(refusal);
    const { link } = await links.links.createLink({ accountId, destinationUrl: "https://example.com/" });
    expect(
      await errorOf(links.links.updateLink({ accountId, linkId: link!.id, destinationUrl })),
      destinationUrl,
    ).toMatchObject(refusal);
  }

  it("refuses the short domain in any spelling: trailing dot, upper case, explicit port", async () => {
    const accountId = newAccount();
    for (const url of [
      `${SHORT_BASE}/abc`,
      `https://${SHORT_HOST}./abc`,
      `https://${SHORT_HOST.toUpperCase()}/abc`,
      `https://${SHORT_HOST}.:443/abc`,
      `http://${SHORT_HOST}../x`,
    ]) {
      await expectRefused(stack, accountId, url);
    }
  });

  it("refuses custom domains compared after IDNA, whichever form was registered or linked", async () => {
    const accountId = newAccount();
    const suffix = randomUUID().slice(0, 6);
    const unicode = await stack.domains.createDomain({ accountId, hostname: `bücher-${suffix}.example` });
    const punycode = unicode.domain!.hostname;
    expect(punycode).toBe(`${new URL(`http://bücher-${suffix}.example`).hostname}`);
    for (const url of [
      `https://bücher-${suffix}.example/x`,
      `https://${punycode}/x`,
      `https://${punycode.toUpperCase()}./x`,
      `https://BÜCHER-${suffix}.example./x`,
    ]) {
      await expectRefused(stack, newAccount(), url);
    }
    const { domain } = await stack.domains.createDomain({ accountId, hostname: `xn--caf-dma.${suffix}.example` });
    const unicodeForm = `https://${domainToUnicode(domain!.hostname)}./menu`;
    expect(unicodeForm).not.toContain("xn--");
    await expectRefused(stack, accountId, unicodeForm);
  });

  it("refuses every loopback spelling of the short domain's host and port when it is a loopback address, and accepts other hosts and ports", async () => {
    const local = await startLinks({ shortLinkBaseUrl: "http://127.0.0.1:8080/" });
    try {
      const accountId = newAccount();
      const spellings = [
        "http://127.0.0.1:8080/abc",
        "http://127.0.0.1.:8080/abc",
        "http://localhost:8080/abc",
        "http://LOCALHOST.:8080/abc",
        "http://app.localhost:8080/abc",
        "http://[::1]:8080/abc",
        "http://[0:0:0:0:0:0:0:1]:8080/abc",
        "http://[::ffff:127.0.0.1]:8080/abc",
        "http://127.1.2.3:8080/abc",
        "http://0x7f000001:8080/abc",
        "http://2130706433:8080/abc",
        "http://0.0.0.0:8080/abc",
      ];
      for (const url of spellings) await expectRefused(local, accountId, url);
      // Another port of this machine is another program (a developer's own server), not our short links.
      const elsewhere = [
        "https://example.com/",
        "http://128.0.0.1/",
        "http://localhost.example.com/",
        "http://localhost:3000/x",
        "http://127.0.0.1/abc",
        "http://[::1]:8081/abc",
      ];
      for (const url of elsewhere) {
        expect((await local.links.createLink({ accountId, destinationUrl: url })).link?.destinationUrl, url).toBe(url);
      }
    } finally {
      await local.close();
    }
    // Where the short domain is a public name, loopback hosts are someone else's (a developer's own server).
    const { link } = await stack.links.createLink({
      accountId: newAccount(),
      destinationUrl: "http://localhost:3000/",
    });
    expect(link?.destinationUrl).toBe("http://localhost:3000/");
  });
});

describe("account isolation", () => {
  it("answers not_found for another account's link on every RPC, and changes nothing", async () => {
    const owner = newAccount();
    const { link } = await stack.links.createLink({ accountId: owner, destinationUrl: "https://example.com/mine" });
    const intruder = newAccount();
    for (const call of [
      () => stack.links.getLink({ accountId: intruder, linkId: link!.id }),
      () => stack.links.updateLink({ accountId: intruder, linkId: link!.id, destinationUrl: "https://evil.example/" }),
      () => stack.links.deleteLink({ accountId: intruder, linkId: link!.id }),
      () => stack.links.deleteLink({ accountId: intruder, linkId: link!.id, purge: true }),
      () => stack.links.getLink({ accountId: "", linkId: link!.id }),
    ]) {
      expect(await errorOf(call())).toMatchObject({ code: Code.NotFound, reason: "not_found" });
    }
    // A malformed id names nothing: refused before any query.
    expect(await errorOf(stack.links.getLink({ accountId: owner, linkId: "not-a-uuid" }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "validation_error",
    });
    expect((await stack.links.getLink({ accountId: owner, linkId: link!.id })).link).toEqual(link);
  });
});
