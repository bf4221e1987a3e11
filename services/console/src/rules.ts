// The rules editor's state and its mapping to the API's `rules` array and back. A rule read from the
// API keeps its `id` through the editor, so saving sends it back and the server keeps the rule (and its
// scans per rule) rather than making a new one. Refusals name paths such as
// `rules[1].conditions.schedule.time_zone`; they are mapped to the editor's rule and control here.
import type { components } from "@qrplatform/api-client";
import { ApiError } from "./api.ts";

export type RoutingRule = components["schemas"]["RoutingRule"];
export type RoutingRuleInput = components["schemas"]["RoutingRuleInput"];
type RuleConditions = components["schemas"]["RuleConditions"];
export type Device = NonNullable<RuleConditions["devices"]>[number];
export type Os = NonNullable<RuleConditions["os"]>[number];
export type Day = NonNullable<components["schemas"]["RuleSchedule"]["days"]>[number];

export const DEVICES: Device[] = ["mobile", "tablet", "desktop"];
export const OSES: Os[] = ["ios", "android", "windows", "macos", "linux", "other"];
export const DAYS: Day[] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

export interface VariantForm {
  url: string;
  weight: string;
}

/** One rule as the editor holds it: text as typed, lists as chosen. */
export interface RuleForm {
  /** The editor's own key for the rule, stable while it moves; never sent. */
  key: string;
  /** The server's id, for a rule that came from the API. */
  id?: string;
  name: string;
  countries: string;
  devices: Device[];
  os: Os[];
  languages: string;
  scheduled: boolean;
  timeZone: string;
  days: Day[];
  from: string;
  to: string;
  /** `datetime-local` values, in the browser's time zone. */
  after: string;
  before: string;
  split: boolean;
  destination: string;
  variants: VariantForm[];
}

let nextKey = 0;
const newKey = () => `rule-${++nextKey}`;

function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

/** A rule for "Add rule": no conditions, one destination. */
export function emptyRule(): RuleForm {
  return {
    key: newKey(),
    name: "",
    countries: "",
    devices: [],
    os: [],
    languages: "",
    scheduled: false,
    timeZone: browserTimeZone(),
    days: [],
    from: "",
    to: "",
    after: "",
    before: "",
    split: false,
    destination: "",
    variants: [
      { url: "", weight: "50" },
      { url: "", weight: "50" },
    ],
  };
}

const pad = (n: number) => String(n).padStart(2, "0");

/** An RFC 3339 instant as a `datetime-local` value in the browser's zone ("" for none). */
export function localInputOf(instant: string | null | undefined): string {
  if (!instant) return "";
  const date = new Date(instant);
  if (Number.isNaN(date.getTime())) return "";
  const minutes = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
  return date.getSeconds() ? `${minutes}:${pad(date.getSeconds())}` : minutes;
}

/** A `datetime-local` value as an RFC 3339 instant in UTC (undefined for none; the text itself when unreadable, for the API to refuse). */
export function instantOf(local: string): string | undefined {
  if (!local.trim()) return undefined;
  const date = new Date(local);
  if (Number.isNaN(date.getTime())) return local;
  return date.toISOString().replace(".000Z", "Z");
}

const listOf = (text: string) =>
  text
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);

/** The editor's form of a rule the API returned. */
export function ruleFormOf(rule: RoutingRule): RuleForm {
  const c = rule.conditions ?? {};
  const empty = emptyRule();
  return {
    ...empty,
    id: rule.id,
    name: rule.name ?? "",
    countries: (c.countries ?? []).join(", "),
    devices: [...(c.devices ?? [])],
    os: [...(c.os ?? [])],
    languages: (c.languages ?? []).join(", "),
    scheduled: Boolean(c.schedule),
    timeZone: c.schedule?.time_zone ?? empty.timeZone,
    days: [...(c.schedule?.days ?? [])],
    from: c.schedule?.from ?? "",
    to: c.schedule?.to ?? "",
    after: localInputOf(c.after),
    before: localInputOf(c.before),
    split: Boolean(rule.variants?.length),
    destination: rule.destination_url ?? "",
    variants: rule.variants?.length
      ? rule.variants.map((v) => ({ url: v.destination_url, weight: String(v.weight) }))
      : empty.variants,
  };
}

/** The API's input for one rule of the editor: only the conditions given, and exactly one action. */
export function ruleInputOf(form: RuleForm): RoutingRuleInput {
  const conditions: RuleConditions = {};
  const countries = listOf(form.countries).map((c) => c.toUpperCase());
  if (countries.length) conditions.countries = countries;
  if (form.devices.length) conditions.devices = DEVICES.filter((d) => form.devices.includes(d));
  if (form.os.length) conditions.os = OSES.filter((o) => form.os.includes(o));
  const languages = listOf(form.languages).map((l) => l.toLowerCase());
  if (languages.length) conditions.languages = languages;
  if (form.scheduled) {
    conditions.schedule = { time_zone: form.timeZone.trim() };
    if (form.days.length) conditions.schedule.days = DAYS.filter((d) => form.days.includes(d));
    if (form.from) conditions.schedule.from = form.from;
    if (form.to) conditions.schedule.to = form.to;
  }
  const after = instantOf(form.after);
  if (after) conditions.after = after;
  const before = instantOf(form.before);
  if (before) conditions.before = before;
  const input: RoutingRuleInput = {};
  if (form.id) input.id = form.id;
  if (form.name.trim()) input.name = form.name.trim();
  input.conditions = conditions;
  if (form.split) {
    input.variants = form.variants.map((v) => ({ destination_url: v.url.trim(), weight: Number(v.weight) }));
  } else {
    input.destination_url = form.destination.trim();
  }
  return input;
}

/**
 * The controls of a rule a refusal can point at: `name`, `countries`, `devices`, `os`, `languages`,
 * `time_zone`, `days`, `from`, `to`, `after`, `before`, `destination_url`, `variants`,
 * `variants.<n>.destination_url`, `variants.<n>.weight`; `rule` for the rule as a whole.
 */
export function ruleControlOf(path: string): string {
  const rest = path
    .replace(/^conditions\.schedule\./, "")
    .replace(/^conditions\./, "")
    .replace(/\[(\d+)\]/g, ".$1");
  const variant = /^variants\.(\d+)\.(destination_url|weight)/.exec(rest);
  if (variant) return `variants.${variant[1]}.${variant[2]}`;
  const head = rest.split(".")[0] ?? "";
  if (["conditions", "schedule"].includes(head) || head === "") return head === "schedule" ? "time_zone" : "rule";
  return head;
}

/** The refusals of a save, by the editor key of the rule they name and its control; `general` for the rest. */
export function ruleProblems(
  error: unknown,
  keys: string[],
): { byRule: Record<string, Record<string, string>>; general: string[] } {
  const byRule: Record<string, Record<string, string>> = {};
  const general: string[] = [];
  if (!(error instanceof ApiError)) return { byRule, general };
  for (const field of error.fields) {
    const match = /^rules\[(\d+)\]\.?(.*)$/.exec(field.field);
    const key = match ? keys[Number(match[1])] : undefined;
    if (!match || !key) {
      if (field.field === "rules" || field.field.startsWith("rules")) general.push(`${field.message}`);
      continue;
    }
    const control = ruleControlOf(match[2] ?? "");
    byRule[key] ??= {};
    const problems = byRule[key];
    problems[control] = problems[control] ? `${problems[control]}; ${field.message}` : field.message;
  }
  return { byRule, general };
}

/** Moves the item at `index` by `by` places, when there is room. */
export function moved<T>(items: T[], index: number, by: -1 | 1): T[] {
  const target = index + by;
  if (target < 0 || target >= items.length) return items;
  const copy = [...items];
  [copy[index], copy[target]] = [copy[target]!, copy[index]!];
  return copy;
}
