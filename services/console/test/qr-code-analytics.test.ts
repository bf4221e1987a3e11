// @vitest-environment happy-dom
// @vitest-environment-options {"url": "http://127.0.0.1:8080/console/qr-codes/x"}
// A code's analytics against a stand-in API: the Day/Hour switch asks the API for the interval, the
// range picker keeps hours within what the API counts them for (31 days, from the first day it names)
// and says why, and the table beside the chart lists the buckets the answer has.
import { h } from "preact";
import { act } from "preact/test-utils";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AnalyticsSection } from "../src/pages/qr-code.tsx";
import { json, mountWithSession, routeNotFound } from "./support/stand-in-api.ts";

// happy-dom has no canvas to draw on; the chart's data is chart-data.test.ts's subject.
vi.mock("uplot", () => ({
  default: class {
    static tzDate = (date: Date) => date;
    destroy() {}
  },
}));

const CODE_ID = "5b0a3f7e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
const HOURLY_FROM = "2026-03-20";

/** Days from `from` to `to`, both included, as YYYY-MM-DD. */
function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/** Answers analytics as the API would for the range and interval asked, and records each query. */
function fakeApi() {
  const asked: Record<string, string>[] = [];
  const fetch = vi.fn(async (request: Request) => {
    const url = new URL(request.url);
    if (url.pathname !== `/api/v1/qr-codes/${CODE_ID}/analytics`) return routeNotFound();
    const query = Object.fromEntries(url.searchParams);
    asked.push(query);
    const days = daysOf(query.from!, query.to!);
    const hourly = days.flatMap((date) =>
      Array.from({ length: 24 }, (_, hour) => ({
        hour: `${date}T${String(hour).padStart(2, "0")}:00:00Z`,
        scans: date === "2026-03-30" && hour === 13 ? 2 : 0,
        unique_scans: date === "2026-03-30" && hour === 13 ? 1 : 0,
      })),
    );
    return json(200, {
      qr_code_id: CODE_ID,
      from: query.from,
      to: query.to,
      interval: query.interval,
      hourly_available_from: HOURLY_FROM,
      total_scans: 2,
      unique_scans: 1,
      daily: days.map((date) => ({
        date,
        scans: date === "2026-03-30" ? 2 : 0,
        unique_scans: date === "2026-03-30" ? 1 : 0,
      })),
      ...(query.interval === "hour" && { hourly }),
      countries: [],
      devices: [],
      operating_systems: [],
      browsers: [],
      referrers: [],
      rules: [],
    });
  });
  return { fetch, asked };
}

describe("a code's analytics", () => {
  let root: HTMLElement;
  let unmount: () => void;
  let api: ReturnType<typeof fakeApi>;
  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-03-31T10:00:00Z"));
    api = fakeApi();
    ({ root, unmount } = await mountWithSession(
      h(AnalyticsSection, { code: { id: CODE_ID, rules: [] } as any }),
      api.fetch,
    ));
  });
  afterEach(() => {
    unmount();
    vi.useRealTimers();
  });

  const radio = (name: string) =>
    [...root.querySelectorAll<HTMLInputElement>('input[type="radio"]')].find(
      (input) => input.parentElement?.textContent?.trim() === name,
    )!;
  const caption = () => root.querySelector("details caption")?.textContent;
  const tableRows = () => [...root.querySelectorAll("details tbody tr")].map((row) => row.textContent);
  async function setDate(id: string, value: string) {
    await act(() => {
      const input = document.getElementById(id) as HTMLInputElement;
      input.value = value;
      input.dispatchEvent(new Event("change", { bubbles: true }));
    });
  }

  it("asks for days by default, and for hours within the range the API allows once Hour is chosen", async () => {
    await vi.waitFor(() => expect(caption()).toBe("Scans per day"));
    expect(api.asked).toEqual([{ from: "2026-03-02", to: "2026-03-31", interval: "day" }]);
    expect(root.querySelector("fieldset legend")?.textContent).toBe("Buckets");
    expect(root.querySelector("#range-hint")).toBeNull();

    await act(() => radio("Hour").click());
    // The range moves to the first day the API keeps hours for, which the picker names and enforces.
    await vi.waitFor(() => expect(caption()).toBe("Scans per hour"));
    expect(api.asked.at(-1)).toEqual({ from: HOURLY_FROM, to: "2026-03-31", interval: "hour" });
    expect(root.querySelector("#range-hint")?.textContent).toMatch(
      /Hour buckets \(UTC\) cover at most 31 days, from 2026-03-20 on: .*older scans keep only their daily counts/,
    );
    const from = document.getElementById("range-from") as HTMLInputElement;
    expect([from.min, from.getAttribute("aria-describedby")]).toEqual([HOURLY_FROM, "range-hint"]);
    expect(tableRows()).toHaveLength(12 * 24);
    expect(tableRows()).toContain("2026-03-30 13:0021");

    // A day before the window is moved back into it; the request asked for stays within bounds.
    await setDate("range-from", "2026-03-01");
    expect(from.value).toBe(HOURLY_FROM);
    expect(api.asked.every((query) => query.interval === "day" || query.from! >= HOURLY_FROM)).toBe(true);

    // Days again: the range stays, and any range is allowed.
    await act(() => radio("Day").click());
    await vi.waitFor(() => expect(caption()).toBe("Scans per day"));
    expect(api.asked.at(-1)).toEqual({ from: HOURLY_FROM, to: "2026-03-31", interval: "day" });
    await setDate("range-from", "2026-01-01");
    await vi.waitFor(() => expect(api.asked.at(-1)).toEqual({ from: "2026-01-01", to: "2026-03-31", interval: "day" }));
    expect(from.min).toBe("");
  });
});
