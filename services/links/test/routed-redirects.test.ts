// Links with routing on the real redirect path (startRedirectPath over the links service, on the
// database of this run): each condition from the request, a split that keeps each visitor on one
// variant, the lifecycle's pages and fallback, the exact scan limit under 200 concurrent scans, and a
// protected code's form, cookie and wrong-guess limit, HEAD and bots included.
import { randomUUID } from "node:crypto";
import http from "node:http";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeviceType, OperatingSystem, VisitOutcome } from "@qrplatform/api/links";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { LinkRoutingSchema } from "@qrplatform/api/links";
import { inProcessTransport, listenHttp, type HttpServer } from "@qrplatform/platform";
import { VISITOR_KEY_SECRET } from "@qrplatform/testing";
import { memoryInvalidationBus, startRedirectPath } from "../src/server.js";
import type { RedirectPath } from "../src/redirects/redirect-path.js";
import { PAGE_SECURITY_POLICY } from "../src/redirects/pages.js";
import { WRONG_GUESSES } from "../src/redirects/password-guesses.js";
import { summarizeScans } from "../src/scans/analytics/scans.repository.js";
import { credentials, logger, SHORT_HOST, startLinks, type LinksStack } from "./support/links-stack.js";

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
const WINDOWS =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";
const BOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

let stack: LinksStack;
let path: RedirectPath;
let server: HttpServer;
const accountId = randomUUID();

beforeAll(async () => {
  const invalidations = memoryInvalidationBus();
  stack = await startLinks({ invalidations });
  path = await startRedirectPath({
    transport: inProcessTransport({ modules: [stack.module], credentials, logger, token: credentials.serviceToken }),
    storeScans: stack.module.storeCheckedScans,
    invalidations,
    reserveScan: stack.module.reserveScan,
    visitorKeySecret: VISITOR_KEY_SECRET,
    // The test's requests come from loopback, naming the visitor and the country as a proxy would.
    trustedProxies: ["loopback"],
    countryHeader: "cf-ipcountry",
    logger,
  });
  server = await listenHttp({ handler: path.handler, host: "127.0.0.1", port: 0, logger, name: "redirector" });
});
afterAll(async () => {
  await server?.close();
  await path?.close();
  await stack?.close();
});

type Routing = MessageInitShape<typeof LinkRoutingSchema>;

const newLink = async (routing?: Routing) => {
  const { link } = await stack.links.createLink({ accountId, destinationUrl: "https://example.com/default", routing });
  return link!;
};

interface Visit {
  method?: string;
  agent?: string;
  country?: string;
  address?: string;
  language?: string;
  cookie?: string;
  form?: string;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function visit(slug: string, v: Visit = {}): Promise<Answer> {
  const headers: Record<string, string> = {
    host: SHORT_HOST,
    "user-agent": v.agent ?? IPHONE,
    "x-forwarded-for": v.address ?? "198.51.100.1",
  };
  if (v.country) headers["cf-ipcountry"] = v.country;
  if (v.language) headers["accept-language"] = v.language;
  if (v.cookie) headers.cookie = v.cookie;
  if (v.form !== undefined) headers["content-type"] = "application/x-www-form-urlencoded";
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port: server.port, path: `/${slug}`, method: v.method ?? "GET", headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on("error", reject);
    req.end(v.form);
  });
}

const where = (answer: Answer) => `${answer.status} ${answer.headers.location ?? ""}`.trim();

describe("a link with rules", () => {
  it("answers a link without routing as before", async () => {
    const link = await newLink();
    expect(where(await visit(link.slug))).toBe("302 https://example.com/default");
  });

  it("routes by country, device, OS and language, first rule first", async () => {
    const link = await newLink({
      rules: [
        { conditions: { countries: ["JP"], languages: ["ja"] }, destinationUrl: "https://example.com/jp-ja" },
        { conditions: { devices: [DeviceType.DESKTOP] }, destinationUrl: "https://example.com/desktop" },
        { conditions: { os: [OperatingSystem.IOS] }, destinationUrl: "https://example.com/ios" },
      ],
    });
    const slug = link.slug;
    expect(where(await visit(slug, { country: "JP", language: "ja-JP,en;q=0.5" }))).toBe(
      "302 https://example.com/jp-ja",
    );
    expect(where(await visit(slug, { country: "JP", language: "en" }))).toBe("302 https://example.com/ios");
    expect(where(await visit(slug, { country: "DE", agent: WINDOWS }))).toBe("302 https://example.com/desktop");
    expect(where(await visit(slug, { country: "DE", agent: "Mozilla/5.0 (Linux; Android 14; Pixel 8) Mobile" }))).toBe(
      "302 https://example.com/default",
    );
  });

  it("keeps each visitor on one variant, and splits visitors between them", async () => {
    const link = await newLink({
      rules: [
        {
          conditions: {},
          variants: [
            { destinationUrl: "https://example.com/a", weight: 50 },
            { destinationUrl: "https://example.com/b", weight: 50 },
          ],
        },
      ],
    });
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const address = `203.0.113.${i}`;
      const first = where(await visit(link.slug, { address }));
      expect(where(await visit(link.slug, { address }))).toBe(first);
      seen.add(first);
    }
    expect(seen).toEqual(new Set(["302 https://example.com/a", "302 https://example.com/b"]));
  });
});

describe("a link's lifecycle", () => {
  const hourAgo = () => timestampFromDate(new Date(Date.now() - 3600_000));
  const inAnHour = () => timestampFromDate(new Date(Date.now() + 3600_000));

  it("answers 404 before starts_at and 410 after expires_at, with pages that say so", async () => {
    const early = await visit((await newLink({ startsAt: inAnHour() })).slug);
    expect(early.status).toBe(404);
    expect(early.body).toContain("not active yet");
    const late = await visit((await newLink({ expiresAt: hourAgo() })).slug);
    expect(late.status).toBe(410);
    expect(late.body).toContain("has ended");
    expect(late.headers["content-security-policy"]).toBe(PAGE_SECURITY_POLICY);
  });

  it("sends scans to expired_url once the code has ended", async () => {
    const link = await newLink({ expiresAt: hourAgo(), expiredUrl: "https://example.com/over" });
    expect(where(await visit(link.slug))).toBe("302 https://example.com/over");
  });

  it("lets exactly max_scans of 200 concurrent scans reach the destination", async () => {
    const link = await newLink({ maxScans: 50n, expiredUrl: "https://example.com/over" });
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => visit(link.slug, { address: `198.51.100.${i % 250}` })),
    );
    const counts = new Map<string, number>();
    for (const answer of answers) counts.set(where(answer), (counts.get(where(answer)) ?? 0) + 1);
    expect(counts).toEqual(
      new Map([
        ["302 https://example.com/default", 50],
        ["302 https://example.com/over", 150],
      ]),
    );
    // The preview reads the same places, and takes none.
    const preview = await stack.links.resolveLinkForVisitor({ accountId, linkId: link.id });
    expect(preview.outcome).toBe(VisitOutcome.LIMIT_REACHED);
    const fresh = await newLink({ maxScans: 1n });
    for (let i = 0; i < 3; i++)
      expect((await stack.links.resolveLinkForVisitor({ accountId, linkId: fresh.id })).outcome).toBe(
        VisitOutcome.DEFAULT,
      );
  });

  it("lets HEAD and bots through uncounted until a counted scan finds the limit reached", async () => {
    const link = await newLink({ maxScans: 1n });
    expect(where(await visit(link.slug, { agent: BOT }))).toBe("302 https://example.com/default");
    expect(where(await visit(link.slug, { method: "HEAD" }))).toBe("302 https://example.com/default");
    expect(where(await visit(link.slug))).toBe("302 https://example.com/default");
    expect((await visit(link.slug)).status).toBe(410);
    expect((await visit(link.slug, { agent: BOT })).status).toBe(410);
  });
});

describe("a protected link", () => {
  let link: Awaited<ReturnType<typeof newLink>>;
  beforeAll(async () => {
    link = await newLink({ password: "correct horse" });
  });

  it("answers a form without scripts or outside assets, HEAD and bots alike", async () => {
    const form = await visit(link.slug);
    expect(form.status).toBe(200);
    expect(form.body).toContain('<form method="post">');
    expect(form.body).toContain('type="password"');
    expect(form.body).not.toMatch(/<script|https?:\/\//);
    expect(form.headers["content-security-policy"]).toBe(PAGE_SECURITY_POLICY);
    expect(PAGE_SECURITY_POLICY).toMatch(/^default-src 'none'; style-src 'sha256-[^']+'; form-action 'self'/);
    const head = await visit(link.slug, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.body).toBe("");
    expect((await visit(link.slug, { agent: BOT })).status).toBe(200);
  });

  it("takes the right password, remembers it for that code only, then redirects", async () => {
    const right = await visit(link.slug, { method: "POST", form: "password=correct+horse" });
    expect(right.status).toBe(303);
    expect(right.headers.location).toBe(`/${link.slug}`);
    const setCookie = right.headers["set-cookie"]![0]!;
    expect(setCookie).toContain(`Path=/${link.slug}`);
    expect(setCookie).toContain("Max-Age=86400");
    const cookie = setCookie.split(";")[0]!;
    expect(where(await visit(link.slug, { cookie }))).toBe("302 https://example.com/default");
    const other = await newLink({ password: "correct horse" });
    expect((await visit(other.slug, { cookie })).status).toBe(200);
  });

  it("answers a wrong password with the form again, then 429 past the limit, per address", async () => {
    const address = "192.0.2.44";
    for (let i = 1; i < WRONG_GUESSES; i++) {
      const wrong = await visit(link.slug, { method: "POST", form: `password=guess${i}xyz`, address });
      expect(wrong.status).toBe(403);
      expect(wrong.body).toContain("not right");
    }
    const last = await visit(link.slug, { method: "POST", form: "password=guess-last", address });
    expect(last.status).toBe(429);
    expect(Number(last.headers["retry-after"])).toBeGreaterThan(0);
    // Even the right password waits now, from that address; another address still gets in.
    expect((await visit(link.slug, { method: "POST", form: "password=correct+horse", address })).status).toBe(429);
    expect((await visit(link.slug, { method: "POST", form: "password=correct+horse" })).status).toBe(303);
  });

  it("refuses POST to a link without a password", async () => {
    const plain = await newLink({ maxScans: 10n });
    expect((await visit(plain.slug, { method: "POST", form: "password=x" })).status).toBe(405);
    const bare = await newLink();
    expect((await visit(bare.slug, { method: "POST", form: "password=x" })).status).toBe(405);
  });
});

// The answers above were recorded as scans with the classification made while answering, and the
// rule (and variant) that decided them.
describe("scans of links with routing", () => {
  it("are recorded with the country the rules read and the rule and variant that decided them", async () => {
    const link = await newLink({
      rules: [
        { conditions: { countries: ["JP"] }, destinationUrl: "https://example.com/jp" },
        {
          conditions: {},
          variants: [
            { destinationUrl: "https://example.com/a", weight: 50 },
            { destinationUrl: "https://example.com/b", weight: 50 },
          ],
        },
      ],
    });
    const [japan, split] = link.routing!.rules.map((rule) => rule.id);
    expect(where(await visit(link.slug, { country: "JP" }))).toBe("302 https://example.com/jp");
    const other = where(await visit(link.slug, { country: "FR" }));
    expect(["302 https://example.com/a", "302 https://example.com/b"]).toContain(other);
    const variant = other.endsWith("/a") ? 0 : 1;
    const today = new Date().toISOString().slice(0, 10);
    const deadline = Date.now() + 10_000;
    let breakdowns: { dimension: string; value: string; scans: number }[] = [];
    const stored = () =>
      breakdowns.filter((row) => row.dimension === "device").reduce((sum, row) => sum + row.scans, 0);
    while (stored() < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      ({ breakdowns } = await summarizeScans(stack.database.db, link.id, today, today));
    }
    const of = (dimension: string) =>
      breakdowns
        .filter((row) => row.dimension === dimension)
        .map((row) => [row.value, row.scans])
        .sort();
    expect(of("country")).toEqual([
      ["FR", 1],
      ["JP", 1],
    ]);
    expect(of("device")).toEqual([["mobile", 2]]);
    expect(of("rule")).toEqual(
      [
        [japan, 1],
        [`${split}/${variant}`, 1],
      ].sort(),
    );
  });
});
