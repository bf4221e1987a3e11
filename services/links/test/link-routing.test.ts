import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DayOfWeek, DeviceType, OperatingSystem, VisitOutcome } from "@qrplatform/api/links";
import { errorOf } from "./support/errors.js";
import { SHORT_BASE, SHORT_HOST, startLinks, type LinksStack } from "./support/links-stack.js";

let stack: LinksStack;
beforeAll(async () => {
  stack = await startLinks();
});
afterAll(() => stack?.close());

const newAccount = () => randomUUID();

const japanRule = {
  name: "Japan on phones",
  conditions: {
    countries: ["JP"],
    devices: [DeviceType.MOBILE],
    os: [OperatingSystem.IOS],
    languages: ["ja"],
    schedule: { timeZone: "Asia/Tokyo", days: [DayOfWeek.MON, DayOfWeek.TUE], from: "22:00", to: "06:00" },
    after: timestampFromDate(new Date("2026-12-01T00:00:00Z")),
    before: timestampFromDate(new Date("2027-01-01T00:00:00Z")),
  },
  destinationUrl: "https://example.jp/",
};
const splitRule = {
  conditions: {},
  variants: [
    { destinationUrl: "https://a.example/", weight: 30 },
    { destinationUrl: "https://b.example/", weight: 70 },
  ],
};

describe("link routing", () => {
  it("stores every routing field on create, assigns rule ids, and returns them on reads without the password", async () => {
    const accountId = newAccount();
    const { link } = await stack.links.createLink({
      accountId,
      destinationUrl: "https://example.com/",
      routing: {
        rules: [japanRule, splitRule],
        startsAt: timestampFromDate(new Date("2026-11-01T00:00:00Z")),
        expiresAt: timestampFromDate(new Date("2027-11-01T00:00:00Z")),
        maxScans: 50n,
        expiredUrl: "https://example.com/over",
        password: "correct horse",
      },
    });
    const routing = link!.routing!;
    expect(routing.rules).toHaveLength(2);
    for (const rule of routing.rules) expect(rule.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(routing.rules[0]).toMatchObject({
      name: "Japan on phones",
      destinationUrl: "https://example.jp/",
      conditions: {
        countries: ["JP"],
        devices: [DeviceType.MOBILE],
        os: [OperatingSystem.IOS],
        languages: ["ja"],
        schedule: { timeZone: "Asia/Tokyo", days: [DayOfWeek.MON, DayOfWeek.TUE], from: "22:00", to: "06:00" },
      },
    });
    expect(timestampDate(routing.rules[0]!.conditions!.after!).toISOString()).toBe("2026-12-01T00:00:00.000Z");
    expect(routing.rules[1]!.variants.map((v) => v.weight)).toEqual([30, 70]);
    expect(routing).toMatchObject({ maxScans: 50n, expiredUrl: "https://example.com/over", passwordProtected: true });
    expect(routing.password).toBeUndefined();
    expect(timestampDate(routing.startsAt!).toISOString()).toBe("2026-11-01T00:00:00.000Z");

    const read = await stack.links.getLink({ accountId, linkId: link!.id });
    expect(read.link?.routing).toEqual(routing);
    // Only a hash is stored.
    const row = await stack.database.db
      .selectFrom("links.links")
      .select(["password_hash"])
      .where("id", "=", link!.id)
      .executeTakeFirstOrThrow();
    expect(row.password_hash).not.toContain("correct horse");
    expect(row.password_hash).toMatch(/scrypt/);
  });

  it("replaces the named fields only, keeps rule ids sent back and gives new rules new ids", async () => {
    const accountId = newAccount();
    const { link } = await stack.links.createLink({
      accountId,
      destinationUrl: "https://example.com/",
      routing: { rules: [japanRule], maxScans: 10n, password: "a password" },
    });
    const kept = link!.routing!.rules[0]!;
    const { link: updated } = await stack.links.updateLink({
      accountId,
      linkId: link!.id,
      routing: { rules: [splitRule, { ...kept, name: "renamed" }], expiredUrl: "https://example.com/x" },
      routingMask: { paths: ["rules", "expired_url", "password"] },
    });
    const rules = updated!.routing!.rules;
    expect(rules[1]).toMatchObject({ id: kept.id, name: "renamed" });
    expect(rules[0]!.id).not.toBe(kept.id);
    expect(updated!.routing).toMatchObject({
      maxScans: 10n,
      expiredUrl: "https://example.com/x",
      passwordProtected: false,
    });

    const cleared = await stack.links.updateLink({
      accountId,
      linkId: link!.id,
      routingMask: { paths: ["rules", "max_scans", "expired_url"] },
    });
    expect(cleared.link!.routing!.rules).toEqual([]);
    expect(cleared.link!.routing!.maxScans).toBeUndefined();
    expect(cleared.link!.routing!.expiredUrl).toBeUndefined();
  });

  it("refuses rule ids it did not assign, and unknown mask paths", async () => {
    const accountId = newAccount();
    const error = await errorOf(
      stack.links.createLink({
        accountId,
        destinationUrl: "https://example.com/",
        routing: { rules: [{ ...japanRule, id: randomUUID() }] },
      }),
    );
    expect(error).toMatchObject({
      code: Code.InvalidArgument,
      fields: [{ field: "routing.rules.0.id", reason: "unknown_rule" }],
    });

    const { link } = await stack.links.createLink({ accountId, destinationUrl: "https://example.com/" });
    const mask = await errorOf(
      stack.links.updateLink({ accountId, linkId: link!.id, routingMask: { paths: ["destination_url"] } }),
    );
    expect(mask).toMatchObject({ code: Code.InvalidArgument, fields: [{ field: "routing_mask" }] });
  });

  it("refuses variant and fallback URLs on the platform's own domains, naming each", async () => {
    const error = await errorOf(
      stack.links.createLink({
        accountId: newAccount(),
        destinationUrl: "https://example.com/",
        routing: {
          rules: [
            {
              conditions: {},
              variants: [
                { destinationUrl: "https://a.example/", weight: 50 },
                { destinationUrl: `${SHORT_BASE}/abcdefgh`, weight: 50 },
              ],
            },
          ],
          expiredUrl: `${SHORT_BASE}/xyz`,
        },
      }),
    );
    expect(error.fields).toEqual([
      { field: "routing.rules.0.variants.1.destination_url", reason: "short_link_destination" },
      { field: "routing.expired_url", reason: "short_link_destination" },
    ]);
  });

  it("keeps another account's link routing out of reach", async () => {
    const { link } = await stack.links.createLink({
      accountId: newAccount(),
      destinationUrl: "https://example.com/",
      routing: { rules: [japanRule] },
    });
    const error = await errorOf(
      stack.links.updateLink({ accountId: newAccount(), linkId: link!.id, routingMask: { paths: ["rules"] } }),
    );
    expect(error.code).toBe(Code.NotFound);
    const read = await stack.links.getLink({ accountId: link!.accountId, linkId: link!.id });
    expect(read.link!.routing!.rules).toHaveLength(1);
  });

  it("refuses enum numbers the contract does not name with INVALID_ARGUMENT on their paths", async () => {
    const error = await errorOf(
      stack.links.createLink({
        accountId: newAccount(),
        destinationUrl: "https://example.com/",
        routing: {
          rules: [
            {
              conditions: {
                devices: [99 as DeviceType],
                os: [OperatingSystem.IOS, 42 as OperatingSystem],
                schedule: { timeZone: "Asia/Tokyo", days: [17 as DayOfWeek] },
              },
              destinationUrl: "https://example.jp/",
            },
          ],
        },
      }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.fields.map((f) => f.field)).toEqual(
      expect.arrayContaining([
        "routing.rules.0.conditions.devices.0",
        "routing.rules.0.conditions.os.1",
        "routing.rules.0.conditions.schedule.days.0",
      ]),
    );
  });

  it("refuses bad routing with INVALID_ARGUMENT naming each field by its proto path", async () => {
    const accountId = newAccount();
    const error = await errorOf(
      stack.links.createLink({
        accountId,
        destinationUrl: "https://example.com/",
        routing: {
          rules: [
            japanRule,
            {
              conditions: { countries: ["XX"], schedule: { timeZone: "Mars/Olympus" } },
              variants: [
                { destinationUrl: "https://a.example/", weight: 60 },
                { destinationUrl: "https://b.example/", weight: 60 },
              ],
            },
          ],
          startsAt: timestampFromDate(new Date("2027-01-01T00:00:00Z")),
          expiresAt: timestampFromDate(new Date("2026-01-01T00:00:00Z")),
          password: "short",
        },
      }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.fields.map((f) => f.field)).toEqual(
      expect.arrayContaining([
        "routing.rules.1.conditions.countries.0",
        "routing.rules.1.conditions.schedule.time_zone",
        "routing.rules.1.variants",
        "routing.expires_at",
        "routing.password",
      ]),
    );

    // One end of the lifetime is checked against the other as stored.
    const { link } = await stack.links.createLink({
      accountId,
      destinationUrl: "https://example.com/",
      routing: { startsAt: timestampFromDate(new Date("2027-01-01T00:00:00Z")) },
    });
    const update = await errorOf(
      stack.links.updateLink({
        accountId,
        linkId: link!.id,
        routing: { expiresAt: timestampFromDate(new Date("2026-06-01T00:00:00Z")) },
        routingMask: { paths: ["expires_at"] },
      }),
    );
    expect(update.fields).toEqual([{ field: "routing.expires_at", reason: "out_of_range" }]);
    // Fewer than 51 rules only.
    const many = await errorOf(
      stack.links.updateLink({
        accountId,
        linkId: link!.id,
        routing: {
          rules: Array.from({ length: 51 }, () => ({ conditions: {}, destinationUrl: "https://a.example/" })),
        },
        routingMask: { paths: ["rules"] },
      }),
    );
    expect(many.fields).toEqual([{ field: "routing.rules", reason: "too_many" }]);
  });

  it("previews a visitor's outcome with ResolveLinkForVisitor, by the redirector's decision", async () => {
    const accountId = newAccount();
    const at = (iso: string) => timestampFromDate(new Date(iso));
    const { link } = await stack.links.createLink({
      accountId,
      destinationUrl: "https://example.com/home",
      queryParameters: { utm_source: "qr" },
      routing: {
        rules: [
          { conditions: { countries: ["JP"], devices: [DeviceType.MOBILE] }, destinationUrl: "https://example.jp/" },
          splitRule,
        ],
        startsAt: at("2026-06-01T00:00:00Z"),
        expiresAt: at("2027-06-01T00:00:00Z"),
        expiredUrl: "https://example.com/over",
      },
    });
    const ruleIds = link!.routing!.rules.map((rule) => rule.id);
    const resolve = (visitor: object, when: string) =>
      stack.links.resolveLinkForVisitor({ accountId, linkId: link!.id, visitor, at: at(when) });

    expect(await resolve({ country: "JP", device: DeviceType.MOBILE }, "2026-12-01T09:00:00Z")).toMatchObject({
      outcome: VisitOutcome.RULE,
      destinationUrl: "https://example.jp/?utm_source=qr",
      ruleId: ruleIds[0],
    });
    const split = await resolve({ country: "DE", visitorKey: "v1" }, "2026-12-01T09:00:00Z");
    expect(split).toMatchObject({ outcome: VisitOutcome.RULE, ruleId: ruleIds[1] });
    expect([0, 1]).toContain(split.variant);
    expect(await resolve({ country: "DE", visitorKey: "v1" }, "2026-12-01T09:00:00Z")).toEqual(split);
    expect(await resolve({}, "2026-01-01T00:00:00Z")).toMatchObject({
      outcome: VisitOutcome.SCHEDULED,
      destinationUrl: "https://example.com/over?utm_source=qr",
    });
    expect(await resolve({}, "2027-06-01T00:00:00Z")).toMatchObject({ outcome: VisitOutcome.EXPIRED });

    // The scan limit goes by the places the redirector took; a preview takes none.
    const limited = await stack.links.createLink({
      accountId,
      destinationUrl: "https://example.com/",
      routing: { maxScans: 2n },
    });
    const preview = () => stack.links.resolveLinkForVisitor({ accountId, linkId: limited.link!.id });
    expect((await preview()).outcome).toBe(VisitOutcome.DEFAULT);
    expect(await stack.module.reserveScan(limited.link!.id, 2)).toBe(true);
    expect((await preview()).outcome).toBe(VisitOutcome.DEFAULT);
    expect(await stack.module.reserveScan(limited.link!.id, 2)).toBe(true);
    expect(await preview()).toMatchObject({ outcome: VisitOutcome.LIMIT_REACHED, destinationUrl: "" });

    const plain = await stack.links.createLink({ accountId, destinationUrl: "https://example.com/plain" });
    expect(
      await stack.links.resolveLinkForVisitor({ accountId, linkId: plain.link!.id, visitor: { country: "JP" } }),
    ).toMatchObject({ outcome: VisitOutcome.DEFAULT, destinationUrl: "https://example.com/plain" });
    // Another account's link is not found.
    const foreign = await errorOf(stack.links.resolveLinkForVisitor({ accountId: newAccount(), linkId: link!.id }));
    expect(foreign.code).toBe(Code.NotFound);
    const bad = await errorOf(
      stack.links.resolveLinkForVisitor({ accountId, linkId: link!.id, visitor: { country: "japan" } }),
    );
    expect(bad.fields).toEqual([{ field: "visitor.country", reason: "invalid_format" }]);
  });

  it("gives the redirector the routing with campaign parameters merged, and the password hash", async () => {
    const accountId = newAccount();
    const { link } = await stack.links.createLink({
      accountId,
      destinationUrl: "https://example.com/",
      queryParameters: { utm_source: "qr" },
      routing: { rules: [japanRule], expiredUrl: "https://example.com/over", password: "open sesame" },
    });
    const answer = await stack.redirects.resolveRedirect({ host: SHORT_HOST, slug: link!.slug });
    expect(answer.routing!.rules[0]!.destinationUrl).toBe("https://example.jp/?utm_source=qr");
    expect(answer.routing!.expiredUrl).toBe("https://example.com/over?utm_source=qr");
    expect(answer.passwordHash).toMatch(/scrypt/);

    const plain = await stack.links.createLink({ accountId, destinationUrl: "https://example.com/" });
    const plainAnswer = await stack.redirects.resolveRedirect({ host: SHORT_HOST, slug: plain.link!.slug });
    expect(plainAnswer.routing).toBeUndefined();
    expect(plainAnswer.passwordHash).toBe("");
  });
});
