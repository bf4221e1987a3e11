// Analytics answers turned into what the chart and tables draw.
import type { components } from "@qrplatform/api-client";

export type Analytics = components["schemas"]["QrCodeAnalytics"];

/** uPlot's columns: x as Unix seconds (UTC midnight of each day), then scans, then unique visitors. */
export type SeriesData = [number[], number[], number[]];

/** The daily series of an analytics answer, in uPlot's column form. */
export function dailySeries(analytics: Pick<Analytics, "daily">): SeriesData {
  const x: number[] = [];
  const scans: number[] = [];
  const unique: number[] = [];
  for (const day of analytics.daily) {
    x.push(Date.parse(`${day.date}T00:00:00Z`) / 1000);
    scans.push(day.scans);
    unique.push(day.unique_scans);
  }
  return [x, scans, unique];
}

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
