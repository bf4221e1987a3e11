// The one decision: each condition alone and together, rule order, schedules in their zone across
// DST changes (the clock is the `now` passed in, so each instant is set exactly), the instants of
// `after`/`before` and of the lifecycle, the scan limit, the password, and the split of visitors.
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  compileRouting,
  type Decision,
  decide,
  type Lifecycle,
  NO_LIFECYCLE,
  NO_ROUTING,
  type Rule,
  variantBucket,
  type Visitor,
} from "@qrplatform/routing";

const DEFAULT = "https://example.com/default";
const at = (iso: string) => Date.parse(iso);
const NOW = at("2026-12-01T09:00:00Z");

const visitor: Visitor = { country: "JP", device: "mobile", os: "ios", language: "ja", key: "visitor-1" };

let ids = 0;
const ruleOf = (conditions: Rule["conditions"], extra: Partial<Rule> = {}): Rule => ({
  id: `00000000-0000-4000-8000-${String(++ids).padStart(12, "0")}`,
  conditions,
  destination_url: "https://example.com/rule",
  ...extra,
});

function decideWith(
  rules: Rule[],
  options: {
    who?: Partial<Visitor>;
    now?: number;
    lifecycle?: Partial<Lifecycle>;
    scans?: number;
    password?: boolean;
    unlocked?: boolean;
  } = {},
): Decision {
  const routing = compileRouting({
    rules,
    lifecycle: { ...NO_LIFECYCLE, ...options.lifecycle },
    password_protected: options.password ?? false,
  });
  return decide(routing, { ...visitor, ...options.who }, options.now ?? NOW, {
    destinationUrl: DEFAULT,
    scans: options.scans ?? 0,
    unlocked: options.unlocked,
  });
}

/** Whether a single rule with these conditions decides. */
const holds = (conditions: Rule["conditions"], who: Partial<Visitor> = {}, now = NOW) =>
  decideWith([ruleOf(conditions)], { who, now }).outcome === "rule";

describe("decide", () => {
  it("sends a code without routing to its destination", () => {
    expect(decide(NO_ROUTING, visitor, NOW, { destinationUrl: DEFAULT, scans: 0 })).toEqual({
      outcome: "default",
      destination_url: DEFAULT,
      rule_id: null,
      variant: null,
    });
    expect(compileRouting({ rules: [], lifecycle: NO_LIFECYCLE, password_protected: false }).trivial).toBe(true);
  });

  it("names the rule that decided", () => {
    const rule = ruleOf({ countries: ["JP"] });
    expect(decideWith([rule])).toEqual({
      outcome: "rule",
      destination_url: "https://example.com/rule",
      rule_id: rule.id,
      variant: null,
    });
  });

  it("lets the first rule that holds decide, and falls back to the destination", () => {
    const rules = [
      ruleOf({ countries: ["DE"] }, { destination_url: "https://example.com/de" }),
      ruleOf({ os: ["ios"] }, { destination_url: "https://example.com/ios" }),
      ruleOf({ countries: ["JP"] }, { destination_url: "https://example.com/jp" }),
    ];
    expect(decideWith(rules).destination_url).toBe("https://example.com/ios");
    expect(decideWith(rules, { who: { country: "DE" } }).destination_url).toBe("https://example.com/de");
    expect(decideWith(rules, { who: { country: "FR", os: "android" } })).toMatchObject({
      outcome: "default",
      destination_url: DEFAULT,
      rule_id: null,
    });
  });

  it("keeps the order of 50 rules across every 32 of them", () => {
    // Rule i names country i, and the last rules name none: the first that holds decides, wherever it is.
    const countries = Array.from({ length: 48 }, (_, i) => `C${String.fromCharCode(65 + (i % 26))}${i}`);
    const rules = [
      ...countries.map((country, i) =>
        ruleOf({ countries: [country] }, { destination_url: `https://example.com/${i}` }),
      ),
      ruleOf({ os: ["android"] }, { destination_url: "https://example.com/android" }),
      ruleOf({}, { destination_url: "https://example.com/anyone" }),
    ];
    for (const i of [0, 30, 31, 32, 33, 47])
      expect(decideWith(rules, { who: { country: countries[i]! } }).destination_url).toBe(`https://example.com/${i}`);
    expect(decideWith(rules, { who: { country: "JP", os: "android" } }).destination_url).toBe(
      "https://example.com/android",
    );
    expect(decideWith(rules, { who: { country: "JP" } }).destination_url).toBe("https://example.com/anyone");
  });

  it("lets a schedule in a zone the runtime does not know never hold, rather than throw", () => {
    const rules = [
      ruleOf({ schedule: { time_zone: "Mars/Olympus_Mons" } }, { destination_url: "https://example.com/mars" }),
      ruleOf({ countries: ["JP"] }, { destination_url: "https://example.com/jp" }),
    ];
    expect(decideWith(rules).destination_url).toBe("https://example.com/jp");
  });

  it("matches a rule without conditions for everyone", () => {
    expect(holds({}, { country: "", device: "", os: "other", language: "" })).toBe(true);
  });

  describe("each condition alone", () => {
    it.each<[Rule["conditions"], Partial<Visitor>, boolean]>([
      [{ countries: ["JP", "KR"] }, { country: "JP" }, true],
      [{ countries: ["JP", "KR"] }, { country: "DE" }, false],
      [{ countries: ["JP"] }, { country: "" }, false],
      [{ devices: ["mobile"] }, { device: "mobile" }, true],
      [{ devices: ["tablet", "desktop"] }, { device: "mobile" }, false],
      [{ devices: ["desktop"] }, { device: "" }, false],
      [{ os: ["ios"] }, { os: "ios" }, true],
      [{ os: ["android"] }, { os: "ios" }, false],
      [{ os: ["other"] }, { os: "other" }, true],
      [{ languages: ["ja"] }, { language: "ja" }, true],
      [{ languages: ["en", "de"] }, { language: "ja" }, false],
      [{ languages: ["en"] }, { language: "" }, false],
    ])("%j for %j: %s", (conditions, who, expected) => {
      expect(holds(conditions, who)).toBe(expected);
    });
  });

  it("wants every given condition to hold", () => {
    const conditions: Rule["conditions"] = {
      countries: ["JP"],
      devices: ["mobile"],
      os: ["ios"],
      languages: ["ja"],
      schedule: { time_zone: "Asia/Tokyo", days: ["tue"], from: "17:00", to: "19:00" },
      after: "2026-11-01T00:00:00Z",
      before: "2027-01-01T00:00:00Z",
    };
    // 2026-12-01 is a Tuesday; 09:00Z is 18:00 in Tokyo.
    expect(holds(conditions)).toBe(true);
    expect(holds(conditions, { country: "KR" })).toBe(false);
    expect(holds(conditions, { device: "tablet" })).toBe(false);
    expect(holds(conditions, { os: "android" })).toBe(false);
    expect(holds(conditions, { language: "en" })).toBe(false);
    expect(holds(conditions, {}, at("2026-12-01T10:00:00Z"))).toBe(false);
    expect(holds(conditions, {}, at("2026-12-08T09:00:00Z"))).toBe(true);
    expect(holds({ ...conditions, before: "2026-12-01T09:00:00Z" })).toBe(false);
  });

  describe("after and before", () => {
    const instant = "2026-12-01T09:00:00Z";
    it("holds from after on, at the instant itself", () => {
      expect(holds({ after: instant }, {}, NOW - 1)).toBe(false);
      expect(holds({ after: instant }, {}, NOW)).toBe(true);
    });
    it("holds until before, not at the instant", () => {
      expect(holds({ before: instant }, {}, NOW - 1)).toBe(true);
      expect(holds({ before: instant }, {}, NOW)).toBe(false);
    });
    it("reads offsets", () => {
      expect(holds({ after: "2026-12-01T10:00:00+01:00" }, {}, NOW)).toBe(true);
      expect(holds({ after: "2026-12-01T10:00:00.001+01:00" }, {}, NOW)).toBe(false);
    });
  });

  describe("schedules", () => {
    const office = (time_zone: string) => ({ schedule: { time_zone, from: "09:00", to: "17:00" } });

    it("keeps office hours in Berlin's wall-clock time across the spring change", () => {
      // Friday 2026-03-27 is CET (UTC+1); Monday 2026-03-30 is CEST (UTC+2).
      expect(holds(office("Europe/Berlin"), {}, at("2026-03-27T07:59:59Z"))).toBe(false);
      expect(holds(office("Europe/Berlin"), {}, at("2026-03-27T08:00:00Z"))).toBe(true);
      expect(holds(office("Europe/Berlin"), {}, at("2026-03-27T15:30:00Z"))).toBe(true);
      expect(holds(office("Europe/Berlin"), {}, at("2026-03-30T06:59:59Z"))).toBe(false);
      expect(holds(office("Europe/Berlin"), {}, at("2026-03-30T07:00:00Z"))).toBe(true);
      expect(holds(office("Europe/Berlin"), {}, at("2026-03-30T15:30:00Z"))).toBe(false);
    });

    it("keeps office hours in New York's wall-clock time across the autumn change", () => {
      // Friday 2026-10-30 is EDT (UTC-4); Monday 2026-11-02 is EST (UTC-5).
      expect(holds(office("America/New_York"), {}, at("2026-10-30T13:00:00Z"))).toBe(true);
      expect(holds(office("America/New_York"), {}, at("2026-10-30T21:00:00Z"))).toBe(false);
      expect(holds(office("America/New_York"), {}, at("2026-11-02T13:59:59Z"))).toBe(false);
      expect(holds(office("America/New_York"), {}, at("2026-11-02T14:00:00Z"))).toBe(true);
      expect(holds(office("America/New_York"), {}, at("2026-11-02T21:59:59Z"))).toBe(true);
    });

    it("ends a Saturday-night window at the local 02:00 that the spring change skips in Berlin", () => {
      const night = { schedule: { time_zone: "Europe/Berlin", days: ["sat" as const], from: "22:00", to: "02:00" } };
      expect(holds(night, {}, at("2026-03-28T20:59:59Z"))).toBe(false); // 21:59:59 CET
      expect(holds(night, {}, at("2026-03-28T21:00:00Z"))).toBe(true); // 22:00 CET
      expect(holds(night, {}, at("2026-03-29T00:59:59Z"))).toBe(true); // 01:59:59 CET, Sunday
      expect(holds(night, {}, at("2026-03-29T01:00:00Z"))).toBe(false); // 03:00 CEST
      // The window belongs to Saturday: Sunday night's evening is not in it.
      expect(holds(night, {}, at("2026-03-29T20:30:00Z"))).toBe(false); // Sunday 22:30 CEST
    });

    it("holds through both passes of the hour New York repeats in autumn", () => {
      const small = { schedule: { time_zone: "America/New_York", days: ["sun" as const], from: "01:00", to: "02:00" } };
      expect(holds(small, {}, at("2026-11-01T04:59:59Z"))).toBe(false); // 00:59:59 EDT
      expect(holds(small, {}, at("2026-11-01T05:30:00Z"))).toBe(true); // 01:30 EDT
      expect(holds(small, {}, at("2026-11-01T06:30:00Z"))).toBe(true); // 01:30 EST
      expect(holds(small, {}, at("2026-11-01T07:00:00Z"))).toBe(false); // 02:00 EST
    });

    it("reads the day in the rule's zone, not in UTC", () => {
      const sunday = { schedule: { time_zone: "Pacific/Auckland", days: ["sun" as const] } };
      // Saturday 2026-12-05 11:30 UTC is Sunday 00:30 in Auckland (UTC+13).
      expect(holds(sunday, {}, at("2026-12-05T10:59:59Z"))).toBe(false);
      expect(holds(sunday, {}, at("2026-12-05T11:30:00Z"))).toBe(true);
    });

    it("takes a window with only from or only to", () => {
      expect(holds({ schedule: { time_zone: "UTC", from: "09:00" } }, {}, at("2026-12-01T23:59:00Z"))).toBe(true);
      expect(holds({ schedule: { time_zone: "UTC", from: "09:00" } }, {}, at("2026-12-01T08:59:00Z"))).toBe(false);
      expect(holds({ schedule: { time_zone: "UTC", to: "09:00" } }, {}, at("2026-12-01T00:00:00Z"))).toBe(true);
      expect(holds({ schedule: { time_zone: "UTC", to: "09:00" } }, {}, at("2026-12-01T09:00:00Z"))).toBe(false);
    });

    it("ends a window at midnight when to is 00:00", () => {
      const evening = { schedule: { time_zone: "UTC", days: ["tue" as const], from: "18:00", to: "00:00" } };
      expect(holds(evening, {}, at("2026-12-01T23:59:59Z"))).toBe(true);
      expect(holds(evening, {}, at("2026-12-02T00:00:00Z"))).toBe(false);
    });

    it("decides rules in several zones at the same instant", () => {
      const rules = [
        ruleOf(
          { schedule: { time_zone: "America/New_York", from: "09:00", to: "17:00" } },
          { destination_url: "https://ny/" },
        ),
        ruleOf(
          { schedule: { time_zone: "Europe/Berlin", from: "09:00", to: "17:00" } },
          { destination_url: "https://de/" },
        ),
      ];
      expect(decideWith(rules, { now: at("2026-12-01T09:00:00Z") }).destination_url).toBe("https://de/");
      expect(decideWith(rules, { now: at("2026-12-01T15:00:00Z") }).destination_url).toBe("https://ny/");
      expect(decideWith(rules, { now: at("2026-12-01T23:00:00Z") }).outcome).toBe("default");
    });
  });

  describe("the lifecycle", () => {
    const lifecycle = { starts_at: "2026-12-01T09:00:00Z", expires_at: "2026-12-24T00:00:00Z" };
    const rules = [ruleOf({})];

    it("is scheduled until starts_at, and live from the instant", () => {
      expect(decideWith(rules, { lifecycle, now: NOW - 1 })).toEqual({
        outcome: "scheduled",
        destination_url: null,
        rule_id: null,
        variant: null,
      });
      expect(decideWith(rules, { lifecycle, now: NOW }).outcome).toBe("rule");
    });

    it("has expired at expires_at", () => {
      const end = at(lifecycle.expires_at);
      expect(decideWith(rules, { lifecycle, now: end - 1 }).outcome).toBe("rule");
      expect(decideWith(rules, { lifecycle, now: end }).outcome).toBe("expired");
    });

    it("sends ended scans to expired_url when it is set", () => {
      const withUrl = { ...lifecycle, expired_url: "https://example.com/over" };
      expect(decideWith([], { lifecycle: withUrl, now: NOW - 1 }).destination_url).toBe("https://example.com/over");
      expect(decideWith([], { lifecycle: withUrl, now: at("2027-01-01T00:00:00Z") })).toMatchObject({
        outcome: "expired",
        destination_url: "https://example.com/over",
      });
    });

    it("reaches the limit once max_scans were counted", () => {
      expect(decideWith([], { lifecycle: { max_scans: 50 }, scans: 49 }).outcome).toBe("default");
      expect(decideWith([], { lifecycle: { max_scans: 50 }, scans: 50 }).outcome).toBe("limit_reached");
      expect(decideWith([], { lifecycle: { max_scans: 1 }, scans: 1 }).outcome).toBe("limit_reached");
    });

    it("puts an ended code before its password", () => {
      expect(decideWith([], { lifecycle: { max_scans: 1 }, scans: 1, password: true }).outcome).toBe("limit_reached");
    });
  });

  describe("the password", () => {
    it("asks for it before any rule decides", () => {
      expect(decideWith([ruleOf({})], { password: true })).toEqual({
        outcome: "password",
        destination_url: null,
        rule_id: null,
        variant: null,
      });
    });
    it("lets an unlocked visitor through to the rules", () => {
      expect(decideWith([ruleOf({})], { password: true, unlocked: true }).outcome).toBe("rule");
      expect(decideWith([], { password: true, unlocked: true }).outcome).toBe("default");
    });
  });

  describe("split rules", () => {
    const keyOf = (i: number) => createHmac("sha256", "secret").update(`visitor ${i}`).digest("base64url").slice(0, 22);
    const visitors = Array.from({ length: 10_000 }, (_, i) => keyOf(i));

    it.each([[[50, 50]], [[50, 30, 20]], [[25, 25, 25, 25]], [[1, 99]], [[97, 1, 1, 1]]])(
      "sends 10,000 visitors within 2 points of the weights %j",
      (weights) => {
        const rule = ruleOf(
          {},
          {
            destination_url: undefined,
            variants: weights.map((weight, i) => ({ destination_url: `https://example.com/v${i}`, weight })),
          },
        );
        const routing = compileRouting({ rules: [rule], lifecycle: NO_LIFECYCLE, password_protected: false });
        const counts = weights.map(() => 0);
        for (const key of visitors) {
          const decision = decide(routing, { ...visitor, key }, NOW, { destinationUrl: DEFAULT, scans: 0 });
          expect(decision.rule_id).toBe(rule.id);
          expect(decision.destination_url).toBe(`https://example.com/v${decision.variant}`);
          counts[decision.variant!]! += 1;
        }
        counts.forEach((count, i) => {
          expect(Math.abs((count / visitors.length) * 100 - weights[i]!)).toBeLessThanOrEqual(2);
        });
      },
    );

    it("gives every visitor the same variant on every scan and after a recompile", () => {
      const rule = ruleOf(
        {},
        {
          destination_url: undefined,
          variants: [
            { destination_url: "https://example.com/a", weight: 50 },
            { destination_url: "https://example.com/b", weight: 50 },
          ],
        },
      );
      const compile = () => compileRouting({ rules: [rule], lifecycle: NO_LIFECYCLE, password_protected: false });
      const first = compile();
      const second = compile();
      let changed = 0;
      for (const key of visitors.slice(0, 2000)) {
        const once = decide(first, { ...visitor, key }, NOW, { destinationUrl: DEFAULT, scans: 0 }).variant;
        for (let scan = 0; scan < 3; scan++) {
          const again = decide(second, { ...visitor, key }, NOW + scan * 86_400_000, {
            destinationUrl: DEFAULT,
            scans: 0,
          });
          if (again.variant !== once) changed++;
        }
      }
      expect(changed).toBe(0);
    });

    it("splits the same visitors independently in different rules", () => {
      const a = "00000000-0000-4000-8000-00000000000a";
      const b = "00000000-0000-4000-8000-00000000000b";
      const together = visitors.filter((key) => variantBucket(key, a) < 50 === variantBucket(key, b) < 50).length;
      expect(Math.abs(together / visitors.length - 0.5)).toBeLessThan(0.02);
    });

    it("reads the visitor key only when a split rule decides", () => {
      let reads = 0;
      const who = {
        ...visitor,
        get key() {
          reads++;
          return "k";
        },
      };
      const routing = compileRouting({
        rules: [ruleOf({ countries: ["JP"] })],
        lifecycle: NO_LIFECYCLE,
        password_protected: false,
      });
      decide(routing, who, NOW, { destinationUrl: DEFAULT, scans: 0 });
      expect(reads).toBe(0);
    });
  });
});
