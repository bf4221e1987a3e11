// Analytics answers turned into what the chart and tables draw.
import type { components } from "@qrplatform/api-client";

export type Analytics = components["schemas"]["QrCodeAnalytics"];

/** The width of the chart's buckets, as the API's `interval` names it. */
export type Interval = "day" | "hour";

/** The longest range the API counts hour buckets for (its `range_too_long` past it). */
export const MAX_HOURLY_DAYS = 31;

/** uPlot's columns: x as Unix seconds (the UTC start of each bucket), then scans, then unique visitors. */
export type SeriesData = [number[], number[], number[]];

/** One bucket of the series as the table beside the chart lists it. */
export interface Bucket {
  /** The bucket's start in UTC: "2026-03-01" for a day, "2026-03-01 13:00" for an hour. */
  label: string;
  /** The bucket's start, Unix seconds. */
  start: number;
  scans: number;
  unique: number;
}

/** The buckets of an analytics answer at the interval asked for (hours when it has them), oldest first. */
export function buckets(analytics: Pick<Analytics, "daily" | "hourly">, interval: Interval): Bucket[] {
  if (interval === "hour" && analytics.hourly) {
    return analytics.hourly.map((hour) => ({
      label: `${hour.hour.slice(0, 10)} ${hour.hour.slice(11, 16)}`,
      start: Date.parse(hour.hour) / 1000,
      scans: hour.scans,
      unique: hour.unique_scans,
    }));
  }
  return analytics.daily.map((day) => ({
    label: day.date,
    start: Date.parse(`${day.date}T00:00:00Z`) / 1000,
    scans: day.scans,
    unique: day.unique_scans,
  }));
}

/** The buckets in uPlot's column form. */
export function seriesOf(rows: readonly Bucket[]): SeriesData {
  return [rows.map((row) => row.start), rows.map((row) => row.scans), rows.map((row) => row.unique)];
}

/**
 * What the range picker allows for hour buckets: the earliest `from` (the API's
 * `hourly_available_from`, and no more than MAX_HOURLY_DAYS days before `to`), and the range moved
 * inside it, keeping `to` and shortening from the start.
 */
export function hourlyRange(
  range: { from: string; to: string },
  availableFrom: string,
): { from: string; to: string; earliest: string } {
  const to = laterDay(range.to, availableFrom);
  const earliest = laterDay(isoDay(new Date(`${to}T00:00:00Z`), MAX_HOURLY_DAYS - 1), availableFrom);
  const from = laterDay(range.from, earliest);
  return { from: earlierDay(from, to), to, earliest };
}

/** The later of two "YYYY-MM-DD" days, which sort as text. */
const laterDay = (a: string, b: string) => (a > b ? a : b);
/** The earlier of two "YYYY-MM-DD" days. */
const earlierDay = (a: string, b: string) => (a > b ? b : a);

/** Each value's share of the total, as a whole percentage, for the breakdown bars. */
export function shares(
  rows: readonly { value: string; scans: number }[],
): { value: string; scans: number; percent: number }[] {
  const total = rows.reduce((sum, row) => sum + row.scans, 0);
  return rows.map((row) => ({ ...row, percent: total === 0 ? 0 : Math.round((row.scans * 100) / total) }));
}

/** A date as the API takes it (YYYY-MM-DD, UTC), `days` before `from`. */
export function isoDay(from: Date, days = 0): string {
  return new Date(from.getTime() - days * 86_400_000).toISOString().slice(0, 10);
}

type RuleScans = components["schemas"]["RuleScans"];
type RoutingRule = components["schemas"]["RoutingRule"];

/**
 * The scans per rule of an analytics answer as breakdown rows named after the code's rules as they are
 * now ("Rule 2: Japan"; a rule removed since keeps its scans under "A removed rule"), and the scans per
 * variant of its split rules, each named after its rule and destination.
 */
export function ruleRows(
  scans: readonly RuleScans[],
  rules: readonly RoutingRule[],
): { rules: { value: string; scans: number }[]; variants: { value: string; scans: number }[] } {
  const place = new Map(rules.map((rule, index) => [rule.id, { rule, index }]));
  const nameOf = (ruleId: string | null): string => {
    if (ruleId === null) return "No rule (the code's destination)";
    const found = place.get(ruleId);
    if (!found) return `A removed rule (${ruleId.slice(0, 8)})`;
    return `Rule ${found.index + 1}${found.rule.name ? `: ${found.rule.name}` : ""}`;
  };
  return {
    rules: scans.map((entry) => ({ value: nameOf(entry.rule_id), scans: entry.scans })),
    variants: scans.flatMap((entry) =>
      entry.variants.map(({ variant, scans: count }) => {
        const url = entry.rule_id ? place.get(entry.rule_id)?.rule.variants?.[variant]?.destination_url : undefined;
        return {
          value: `${nameOf(entry.rule_id)}, variant ${variant + 1}${url ? ` (${url})` : ""}`,
          scans: count,
        };
      }),
    ),
  };
}
