// Rules that every benchmark visitor reads to the end and none of which holds, so the code's own
// destination applies: each rule's conditions hold for a phone on iOS or Android whose first
// language is English or Japanese, in the given countries, between 2026 and 2099, and fail only at the
// last one read, a schedule of one minute a weekday (03:33 local) in one of five zones. The same
// shape as routing.ts's failing rules, in the REST form (RuleInput) that CreateLink takes through
// ruleInitOf and the API takes as it is.
import type { RuleInput } from "@qrplatform/routing";

const ZONES = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney", "America/Sao_Paulo"];

/** The countries the rules name: each rule's country condition holds for a visitor from one of them. */
export const RULE_COUNTRIES = ["DE", "FR", "JP", "US", "KR"];

/** The Accept-Language the rules' language condition holds for. */
export const RULES_ACCEPT_LANGUAGE = "en-US,en;q=0.9,ja;q=0.5";

/** `count` rules none of which holds for the benchmark's visitors at most minutes of the week. */
export function failingRules(count: number, countries: string[]): RuleInput[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `Rule ${i}`,
    conditions: {
      countries,
      devices: ["mobile", "tablet"],
      os: ["ios", "android"],
      languages: ["en", "ja"],
      after: "2026-01-01T00:00:00Z",
      before: "2099-12-31T00:00:00Z",
      schedule: {
        time_zone: ZONES[i % ZONES.length]!,
        days: ["mon", "tue", "wed", "thu", "fri"],
        from: "03:33",
        to: "03:34",
      },
    },
    destination_url: `https://example.com/rule/${i}`,
  }));
}
