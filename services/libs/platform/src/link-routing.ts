// A link's routing (issue 35) in its two spellings: the proto (qrplatform.links.v1.LinkRouting), which
// the catalog and the links service are called with, and the API's JSON names and tokens, which the REST
// edge reads and writes, the routing check (@qrplatform/routing) reports paths in, and links.links.rules
// stores. One mapping serves the three doors, so a field is named the same way everywhere.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
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
  type Rule,
} from "@qrplatform/api/links";
import type { DescEnum } from "@bufbuild/protobuf";
import { enumFromToken, enumToken } from "./enums.js";
import { invalidArgument, type FieldProblem } from "./errors.js";

/**
 * A routing rule in the API's JSON names and tokens, as the REST API shows it and links.links stores it:
 * the shape of @qrplatform/routing's RuleInput (which builds on this library, so cannot be imported here).
 */
export interface RuleJson {
  /** Absent in a request for a new rule. */
  id?: string;
  name?: string;
  conditions: {
    countries?: string[];
    devices?: string[];
    os?: string[];
    languages?: string[];
    schedule?: { time_zone: string; days?: string[]; from?: string; to?: string };
    after?: string;
    before?: string;
  };
  destination_url?: string;
  variants?: { destination_url: string; weight: number }[];
}

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

const isoOf = (timestamp: Timestamp | undefined) => (timestamp ? timestampDate(timestamp).toISOString() : undefined);
const nonEmpty = <T>(list: T[]) => (list.length > 0 ? list : undefined);

function dropUndefined<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] === undefined) delete value[key];
  return value;
}

/** A proto rule in JSON; enum values become their tokens (an unspecified one "unspecified", which the check refuses). */
export function ruleJsonOf(rule: Rule): RuleJson {
  const c = rule.conditions;
  const schedule = c?.schedule;
  const conditions: RuleJson["conditions"] = {
    countries: c && nonEmpty(c.countries),
    devices: c && nonEmpty(c.devices.map((d) => enumToken(DeviceTypeSchema, d))),
    os: c && nonEmpty(c.os.map((o) => enumToken(OperatingSystemSchema, o))),
    languages: c && nonEmpty(c.languages),
    schedule: schedule && {
      time_zone: schedule.timeZone,
      days: nonEmpty(schedule.days.map((d) => enumToken(DayOfWeekSchema, d))),
      from: schedule.from || undefined,
      to: schedule.to || undefined,
    },
    after: isoOf(c?.after),
    before: isoOf(c?.before),
  };
  return dropUndefined({
    id: rule.id || undefined,
    name: rule.name || undefined,
    conditions: dropUndefined(conditions),
    destination_url: rule.destinationUrl || undefined,
    variants: nonEmpty(rule.variants.map((v) => ({ destination_url: v.destinationUrl, weight: v.weight }))),
  });
}

// A token that names no value becomes the unspecified value, which the routing check refuses on its path.
const valuesOf = <E extends number>(schema: DescEnum, list: string[] | undefined) =>
  (list ?? []).map((token) => (enumFromToken(schema, token) ?? 0) as E);

const timestampOf = (iso: string | undefined) => (iso === undefined ? undefined : timestampFromDate(new Date(iso)));

/** A JSON rule as the proto's initializer. */
export function ruleInitOf(rule: RuleJson): MessageInitShape<typeof RuleSchema> {
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

/** A JSON rule as the proto. */
export function ruleOf(rule: RuleJson): Rule {
  return create(RuleSchema, ruleInitOf(rule));
}

/**
 * The routing fields a request names, in the API's JSON names, as the routing check reads them: only the
 * named ones, each null when the request clears it.
 */
export function routingJsonOf(routing: LinkRouting | undefined, named: ReadonlySet<RoutingField>) {
  const json: {
    rules?: RuleJson[];
    starts_at?: string | null;
    expires_at?: string | null;
    max_scans?: number | null;
    expired_url?: string | null;
    password?: string | null;
  } = {};
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
