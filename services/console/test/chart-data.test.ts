import { describe, expect, it } from "vitest";
import { dailySeries, isoDay, shares } from "../src/chart-data.ts";

describe("the analytics chart's data", () => {
  it("gives uPlot one column of UTC-midnight seconds and one per series, in the API's order", () => {
    expect(
      dailySeries({
        daily: [
          { date: "2026-03-01", scans: 3, unique_scans: 2 },
          { date: "2026-03-02", scans: 0, unique_scans: 0 },
        ],
      }),
    ).toEqual([
      [Date.UTC(2026, 2, 1) / 1000, Date.UTC(2026, 2, 2) / 1000],
      [3, 0],
      [2, 0],
    ]);
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
});
