// A link's routing (issue 35) in its two spellings: the proto (qrplatform.links.v1.LinkRouting), which
// the catalog and the links service are called with, and the API's JSON names and tokens (types.ts), which
// the REST edge reads and writes, the routing check reports paths in, and links.links.rules stores. One
// mapping serves the three doors, so a field is named the same way everywhere.
import { create, type DescEnum, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type FieldMask, type Timestamp } from "@bufbuild/protobuf/wkt";
import {
  DayOfWeekSchema,
  DeviceTypeSchema,
  OperatingSystemSchema,
  RuleSchema,
  type DayOfWeek,
  type DeviceType,
  type LinkRouting,
  type OperatingSystem,
  type Rule as ProtoRule,
} from "@qrplatform/api/links";
import { enumFromToken, invalidArgument, type FieldProblem } from "@qrplatform/platform";
import type { Conditions, Device, Os, RuleInput, RoutingInput, Weekday } from "./types.js";

/** The routing fields a request may name, by their proto and JSON names; `password` is written, never read. */
export const ROUTING_FIELDS = ["rules", "starts_at", "expires_at", "max_scans", "expired_url", "password"] as const;
export type RoutingField = (typeof ROUTING_FIELDS)[number];

/** Every routing field: what a create sets. */
export const ALL_ROUTING_FIELDS: ReadonlySet<RoutingField> = new Set(ROUTING_FIELDS);

/** The routing fields an update's mask names; a path that is not one is refused. */
export function namedRoutingFields(mask: FieldMask | undefined): Set<RoutingField> {
  const paths = mask?.paths ?? [];
  const unknown = paths.filter((path) => !(ROUTING_FIELDS as readonly string[]).includes(path));
  if (unknown.length > 0) {
    throw invalidArgument([
      {
        field: "routing_mask",
        reason: "invalid_value",
        description: `names ${unknown.map((p) => JSON.stringify(p)).join(", ")}; it may name only ${ROUTING_FIELDS.join(", ")}`,
      },
    ]);
  }
  return new Set(paths as RoutingField[]);
}

/**
 * Whole-second instants as RFC 3339 strings, remembered: a list page writes the `after` and `before` of
 * hundreds of rules, mostly the same few instants, and formatting a Date costs more than the rest of a
 * rule's mapping (a tenth of the edge's time on such a page). Bounded by starting over when full.
 */
const isoBySecond = new Map<bigint, string>();
const MAX_REMEMBERED_INSTANTS = 10_000;

function isoOf(timestamp: Timestamp | undefined): string | undefined {
  if (!timestamp) return undefined;
  if (timestamp.nanos !== 0) return timestampDate(timestamp).toISOString();
  let iso = isoBySecond.get(timestamp.seconds);
  if (iso === undefined) {
    if (isoBySecond.size >= MAX_REMEMBERED_INSTANTS) isoBySecond.clear();
    iso = timestampDate(timestamp).toISOString();
    isoBySecond.set(timestamp.seconds, iso);
  }
  return iso;
}

/**
 * An enum's public tokens by value, looked up once: rules are mapped on every read of a code, and a list
 * page maps hundreds of their enum values. A value the table does not know reads "unspecified", which
 * the routing check refuses.
 */
function tokenTable<T extends string>(schema: DescEnum): (value: number) => T {
  const tokens: string[] = [];
  for (const value of schema.values) tokens[value.number] = value.localName.toLowerCase();
  return (value) => (tokens[value] ?? "unspecified") as T;
}

const deviceToken = tokenTable<Device>(DeviceTypeSchema);
const osToken = tokenTable<Os>(OperatingSystemSchema);
const dayToken = tokenTable<Weekday>(DayOfWeekSchema);

/**
 * A proto rule in the API's JSON: enum values become their tokens (an unspecified one "unspecified", which
 * the check refuses), and empty fields are left out. Each object is built with only the keys it has,
 * never trimmed afterwards, so that serialising it stays on V8's fast path.
 */
export function ruleJsonOf(rule: ProtoRule): RuleInput {
  const json: RuleInput = {};
  if (rule.id) json.id = rule.id;
  if (rule.name) json.name = rule.name;
  json.conditions = conditionsJsonOf(rule.conditions);
  if (rule.destinationUrl) json.destination_url = rule.destinationUrl;
  if (rule.variants.length > 0)
    json.variants = rule.variants.map((v) => ({ destination_url: v.destinationUrl, weight: v.weight }));
  return json;
}

function conditionsJsonOf(c: ProtoRule["conditions"]): Conditions {
  const json: Conditions = {};
  if (!c) return json;
  if (c.countries.length > 0) json.countries = c.countries;
  if (c.devices.length > 0) json.devices = c.devices.map(deviceToken);
  if (c.os.length > 0) json.os = c.os.map(osToken);
  if (c.languages.length > 0) json.languages = c.languages;
  const schedule = c.schedule;
  if (schedule) {
    json.schedule = { time_zone: schedule.timeZone };
    if (schedule.days.length > 0) json.schedule.days = schedule.days.map(dayToken);
    if (schedule.from) json.schedule.from = schedule.from;
    if (schedule.to) json.schedule.to = schedule.to;
  }
  if (c.after) json.after = isoOf(c.after);
  if (c.before) json.before = isoOf(c.before);
  return json;
}

// A token that names no value becomes the unspecified value, which the routing check refuses on its path.
const valuesOf = <E extends number>(schema: DescEnum, list: readonly string[] | undefined) =>
  (list ?? []).map((token) => (enumFromToken(schema, token) ?? 0) as E);

const timestampOf = (iso: string | undefined) => (iso === undefined ? undefined : timestampFromDate(new Date(iso)));

/** A rule in the API's JSON as the proto's initializer. */
export function ruleInitOf(rule: RuleInput): MessageInitShape<typeof RuleSchema> {
  const c = rule.conditions ?? {};
  return {
    id: rule.id ?? "",
    name: rule.name ?? "",
    conditions: {
      countries: c.countries ?? [],
      devices: valuesOf<DeviceType>(DeviceTypeSchema, c.devices),
      os: valuesOf<OperatingSystem>(OperatingSystemSchema, c.os),
      languages: c.languages ?? [],
      schedule: c.schedule && {
        timeZone: c.schedule.time_zone,
        days: valuesOf<DayOfWeek>(DayOfWeekSchema, c.schedule.days),
        from: c.schedule.from ?? "",
        to: c.schedule.to ?? "",
      },
      after: timestampOf(c.after),
      before: timestampOf(c.before),
    },
    destinationUrl: rule.destination_url ?? "",
    variants: (rule.variants ?? []).map((v) => ({ destinationUrl: v.destination_url, weight: v.weight })),
  };
}

/** A rule in the API's JSON as the proto. */
export function ruleOf(rule: RuleInput): ProtoRule {
  return create(RuleSchema, ruleInitOf(rule));
}

/**
 * The routing fields a request names, in the API's JSON names, as the routing check reads them: only the
 * named ones, each null when the request clears it.
 */
export function routingJsonOf(routing: LinkRouting | undefined, named: ReadonlySet<RoutingField>): RoutingInput {
  const json: RoutingInput = {};
  if (named.has("rules")) json.rules = (routing?.rules ?? []).map(ruleJsonOf);
  if (named.has("starts_at")) json.starts_at = isoOf(routing?.startsAt) ?? null;
  if (named.has("expires_at")) json.expires_at = isoOf(routing?.expiresAt) ?? null;
  if (named.has("max_scans")) json.max_scans = routing?.maxScans === undefined ? null : Number(routing.maxScans);
  if (named.has("expired_url")) json.expired_url = routing?.expiredUrl ?? null;
  if (named.has("password")) json.password = routing?.password ?? null;
  return json;
}

/**
 * A routing path as the API and the routing check spell it (`rules[3].conditions.schedule.time_zone`) as the
 * proto path a gRPC caller sees (`routing.rules.3.conditions.schedule.time_zone`).
 */
export function routingProtoPath(path: string): string {
  return `routing.${path.replace(/\[(\d+)\]/g, ".$1")}`;
}

/** Routing problems (API paths) as the problems of a request with a `routing` field (proto paths). */
export function routingProblemsAsProto(problems: readonly FieldProblem[]): FieldProblem[] {
  return problems.map((problem) => ({ ...problem, field: routingProtoPath(problem.field) }));
}
