import { describe, expect, it } from "vitest";
import { buckets, hourlyRange, isoDay, ruleRows, seriesOf, shares } from "../src/chart-data.ts";

describe("the analytics chart's data", () => {
  it("draws the hour buckets when the answer has them, each at its UTC hour, and the days otherwise", () => {
    const answer = {
      daily: [{ date: "2026-03-01", scans: 3, unique_scans: 2 }],
      hourly: [
        { hour: "2026-03-01T00:00:00Z", scans: 0, unique_scans: 0 },
        { hour: "2026-03-01T13:00:00Z", scans: 3, unique_scans: 2 },
      ],
    };
    const hours = buckets(answer, "hour");
    expect(hours.map((row) => row.label)).toEqual(["2026-03-01 00:00", "2026-03-01 13:00"]);
    expect(seriesOf(hours)).toEqual([
      [Date.UTC(2026, 2, 1) / 1000, Date.UTC(2026, 2, 1, 13) / 1000],
      [0, 3],
      [0, 2],
    ]);
    expect(buckets(answer, "day")).toEqual([
      { label: "2026-03-01", start: Date.UTC(2026, 2, 1) / 1000, scans: 3, unique: 2 },
    ]);
    // An answer of days only (the API's default) is drawn in days whichever switch asked for it.
    expect(buckets({ daily: answer.daily }, "hour").map((row) => row.label)).toEqual(["2026-03-01"]);
  });

  it("keeps an hourly range within 31 days and the raw window, shortening it from the start", () => {
    // 31 days ending on the 31st start on the 1st; a longer range loses its first days.
    expect(hourlyRange({ from: "2026-02-01", to: "2026-03-31" }, "2000-01-01")).toEqual({
      from: "2026-03-01",
      to: "2026-03-31",
      earliest: "2026-03-01",
    });
    expect(hourlyRange({ from: "2026-03-10", to: "2026-03-31" }, "2000-01-01")).toEqual({
      from: "2026-03-10",
      to: "2026-03-31",
      earliest: "2026-03-01",
    });
    // The raw window starts later than 31 days back: it is the limit.
    expect(hourlyRange({ from: "2026-03-01", to: "2026-03-31" }, "2026-03-20")).toEqual({
      from: "2026-03-20",
      to: "2026-03-31",
      earliest: "2026-03-20",
    });
    // A range wholly before the window moves to its first day.
    expect(hourlyRange({ from: "2026-01-01", to: "2026-01-05" }, "2026-03-20")).toEqual({
      from: "2026-03-20",
      to: "2026-03-20",
      earliest: "2026-03-20",
    });
  });

  it("gives each breakdown value its share of the scans, and none of nothing", () => {
    expect(
      shares([
        { value: "FR", scans: 3 },
        { value: "DE", scans: 1 },
      ]),
    ).toEqual([
      { value: "FR", scans: 3, percent: 75 },
      { value: "DE", scans: 1, percent: 25 },
    ]);
    expect(shares([])).toEqual([]);
  });

  it("counts range days back in UTC", () => {
    const now = new Date("2026-03-31T23:30:00Z");
    expect(isoDay(now)).toBe("2026-03-31");
    expect(isoDay(now, 29)).toBe("2026-03-02");
  });

  it("names scans per rule after the code's rules as they are now, and each split's variants after their URL", () => {
    const japan = "11111111-1111-4111-8111-111111111111";
    const split = "22222222-2222-4222-8222-222222222222";
    const removed = "33333333-3333-4333-8333-333333333333";
    const rows = ruleRows(
      [
        {
          rule_id: split,
          scans: 36,
          variants: [
            { variant: 0, scans: 17 },
            { variant: 1, scans: 19 },
          ],
        },
        { rule_id: japan, scans: 12, variants: [] },
        { rule_id: removed, scans: 2, variants: [] },
        { rule_id: null, scans: 12, variants: [] },
      ],
      [
        { id: japan, name: "Japan", conditions: { countries: ["JP"] }, destination_url: "https://example.jp/" },
        {
          id: split,
          conditions: {},
          variants: [
            { destination_url: "https://example.com/a", weight: 50 },
            { destination_url: "https://example.com/b", weight: 50 },
          ],
        },
      ],
    );
    expect(rows.rules).toEqual([
      { value: "Rule 2", scans: 36 },
      { value: "Rule 1: Japan", scans: 12 },
      { value: "A removed rule (33333333)", scans: 2 },
      { value: "No rule (the code's destination)", scans: 12 },
    ]);
    expect(rows.variants).toEqual([
      { value: "Rule 2, variant 1 (https://example.com/a)", scans: 17 },
      { value: "Rule 2, variant 2 (https://example.com/b)", scans: 19 },
    ]);
  });
});
