import { randomUUID } from "node:crypto";
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { LinkStatus, type Link } from "@qrplatform/api/links";
import { inProcessTransport, listenHttp, type HttpServer } from "@qrplatform/platform";
import { buildRedirector, resolveVia } from "../src/server.js";
import { errorOf } from "./support/errors.js";
import { credentials, logger, SHORT_HOST, startLinks, type LinksStack } from "./support/links-stack.js";

let stack: LinksStack;
let server: HttpServer;
const accountId = randomUUID();

beforeAll(async () => {
  stack = await startLinks();
  const transport = inProcessTransport({
    modules: [stack.module],
    credentials,
    logger,
    token: credentials.serviceToken,
  });
  server = await listenHttp({
    handler: buildRedirector({ resolve: resolveVia(transport), logger }),
    host: "127.0.0.1",
    port: 0,
    logger,
    name: "redirector",
  });
});
afterAll(async () => {
  await server?.close();
  await stack?.close();
});

interface LinkFields {
  destinationUrl?: string;
  queryParameters?: Record<string, string>;
  vanityDomainId?: string;
  vanitySlug?: string;
}

const createLink = async (fields: LinkFields = {}): Promise<Link> =>
  (
    await stack.links.createLink({
      accountId,
      destinationUrl: "https://example.com/landing?keep=1&utm_source=old",
      ...fields,
    })
  ).link!;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One request to the redirector with the given Host header, over a real socket. */
function request(path: string, host: string, method = "GET"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port: server.port, path, method, headers: { host }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("ResolveRedirect", () => {
  it("resolves a generated slug on the short domain, in any case, merging the campaign parameters", async () => {
    const link = await createLink({
      queryParameters: { utm_source: "qr", utm_medium: "print", utm_campaign: "spring" },
    });
    for (const slug of [link.slug, link.slug.toUpperCase()]) {
      const resolved = await stack.redirects.resolveRedirect({ host: SHORT_HOST, slug });
      expect(resolved).toMatchObject({
        linkId: link.id,
        accountId,
        paused: false,
        location: "https://example.com/landing?keep=1&utm_source=qr&utm_medium=print&utm_campaign=spring",
      });
    }
    // The short domain with an explicit default port is the same host.
    expect((await stack.redirects.resolveRedirect({ host: `${SHORT_HOST}:443`, slug: link.slug })).linkId).toBe(
      link.id,
    );
  });

  it("keeps a destination without parameters as it is", async () => {
    const link = await createLink({ destinationUrl: "https://example.com/a?b=c%20d#frag" });
    expect((await stack.redirects.resolveRedirect({ host: SHORT_HOST, slug: link.slug })).location).toBe(
      "https://example.com/a?b=c%20d#frag",
    );
  });

  it("resolves a vanity slug on a verified custom domain, and only there", async () => {
    const domain = await stack.verifiedDomain(accountId, "go.resolve.example");
    const link = await createLink({
      vanityDomainId: domain.id,
      vanitySlug: "Menu",
      queryParameters: { utm_source: "table" },
    });
    const resolved = await stack.redirects.resolveRedirect({ host: "GO.Resolve.Example.", slug: "MENU" });
    expect(resolved).toMatchObject({
      linkId: link.id,
      location: "https://example.com/landing?keep=1&utm_source=table",
    });
    // The generated slug still works on the short domain...
    expect((await stack.redirects.resolveRedirect({ host: SHORT_HOST, slug: link.slug })).linkId).toBe(link.id);
    // ...but slugs do not cross between domains.
    for (const [host, slug] of [
      ["go.resolve.example", link.slug],
      [SHORT_HOST, "menu"],
      ["other.example", "menu"],
    ] as const) {
      expect(await errorOf(stack.redirects.resolveRedirect({ host, slug })), `${host}/${slug}`).toMatchObject({
        code: Code.NotFound,
      });
    }
  });

  it("reports a paused link without a location", async () => {
    const link = await createLink();
    await stack.links.updateLink({ accountId, linkId: link.id, status: LinkStatus.PAUSED });
    expect(await stack.redirects.resolveRedirect({ host: SHORT_HOST, slug: link.slug })).toMatchObject({
      paused: true,
      location: "",
    });
  });

  it("answers not_found for deleted and unknown links, unverified domains and junk", async () => {
    const deleted = await createLink();
    await stack.links.deleteLink({ accountId, linkId: deleted.id });
    const domain = await stack.verifiedDomain(accountId, "go.unverified.example");
    await createLink({ vanityDomainId: domain.id, vanitySlug: "lost" });
    stack.dns.txt.delete(domain.challengeRecordName);
    await stack.domains.verifyDomain({ accountId, domainId: domain.id });

    for (const [host, slug] of [
      [SHORT_HOST, deleted.slug],
      [SHORT_HOST, "zzzzzzzz"],
      ["go.unverified.example", "lost"],
      [SHORT_HOST, ""],
      [SHORT_HOST, "../etc"],
      ["", deleted.slug],
      ["evil@host", deleted.slug],
    ] as const) {
      expect(await errorOf(stack.redirects.resolveRedirect({ host, slug })), `${host}/${slug}`).toMatchObject({
        code: Code.NotFound,
        reason: "not_found",
      });
    }
  });
});

describe("the redirector", () => {
  it("answers 302 with the merged Location and no-store, for GET and HEAD", async () => {
    const link = await createLink({ queryParameters: { utm_source: "qr" } });
    for (const method of ["GET", "HEAD"]) {
      const answer = await request(`/${link.slug}?ignored=1`, SHORT_HOST, method);
      expect(answer.status).toBe(302);
      expect(answer.headers.location).toBe("https://example.com/landing?keep=1&utm_source=qr");
      expect(answer.headers["cache-control"]).toBe("no-store");
      expect(answer.body.length).toBe(0);
    }
  });

  it("redirects a vanity slug on its custom domain", async () => {
    const domain = await stack.verifiedDomain(accountId, "go.http.example");
    await createLink({ destinationUrl: "https://example.com/vanity", vanityDomainId: domain.id, vanitySlug: "open" });
    const answer = await request("/Open", "go.http.example");
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe("https://example.com/vanity");
  });

  it("shows the paused page with 404 and no-store", async () => {
    const link = await createLink();
    await stack.links.updateLink({ accountId, linkId: link.id, status: LinkStatus.PAUSED });
    const answer = await request(`/${link.slug}`, SHORT_HOST);
    expect(answer.status).toBe(404);
    expect(answer.headers["cache-control"]).toBe("no-store");
    expect(answer.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(answer.headers.location).toBeUndefined();
    expect(answer.body.toString()).toMatch(/paused/i);
    const head = await request(`/${link.slug}`, SHORT_HOST, "HEAD");
    expect(head.status).toBe(404);
    expect(head.body.length).toBe(0);
  });

  it("answers one uniform 404 page, byte for byte, for every kind of miss", async () => {
    const deleted = await createLink();
    await stack.links.deleteLink({ accountId, linkId: deleted.id });
    const live = await createLink();
    // The live link does redirect on its own host; on a foreign host it is a miss like any other.
    expect((await request(`/${live.slug}`, SHORT_HOST)).status).toBe(302);

    const misses = await Promise.all([
      request("/zzzzzzzz", SHORT_HOST), // unknown
      request(`/${deleted.slug}`, SHORT_HOST), // deleted
      request(`/${live.slug}`, "foreign.example"), // a live slug on a host that is not ours
      request(`/${live.slug}/extra`, SHORT_HOST), // more than one segment
      request("/", SHORT_HOST),
      request("/a%2Fb", SHORT_HOST),
      request(`//${live.slug}`, SHORT_HOST),
    ]);
    const [first] = misses;
    expect(first!.body.toString()).toMatch(/not found/i);
    expect(first!.body.toString()).not.toMatch(/paused/i);
    for (const miss of misses) {
      expect(miss.status).toBe(404);
      expect(miss.headers["cache-control"]).toBe("no-store");
      expect(miss.headers.location).toBeUndefined();
      expect(miss.body.equals(first!.body)).toBe(true);
    }
  });

  it("answers 405 to other methods", async () => {
    const link = await createLink();
    const answer = await request(`/${link.slug}`, SHORT_HOST, "POST");
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe("GET, HEAD");
  });

  it("answers 503, not a 404, when the links cannot be looked up", async () => {
    const failing = await listenHttp({
      handler: buildRedirector({ resolve: () => Promise.reject(new Error("database down")), logger }),
      host: "127.0.0.1",
      port: 0,
      logger,
      name: "failing redirector",
    });
    try {
      const answer = await new Promise<number>((resolve, reject) =>
        http
          .get({ host: "127.0.0.1", port: failing.port, path: "/abcdefgh", agent: false }, (res) => {
            res.resume();
            resolve(res.statusCode!);
          })
          .on("error", reject),
      );
      expect(answer).toBe(503);
    } finally {
      await failing.close();
    }
  });
});
