import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { QrCode } from "@qrplatform/api/catalog";
import { LinkLifecycleSchema, type LinkRouting, type LinkRoutingSchema } from "@qrplatform/api/links";
import { enumToken, type FieldProblem } from "@qrplatform/platform";
import {
  ROUTING_FIELDS,
  type RoutingField,
  type RoutingInput,
  routingProblems,
  ruleInitOf,
  ruleJsonOf,
  type RuleInput,
} from "@qrplatform/routing";
import { z } from "zod";
import { dateTime, optionalCount } from "./json.js";

/**
 * The routing fields of a create or PATCH body. The schema takes them as they are: the routing package's
 * checks (routingQrCodeProblems) report every problem with the contract's paths, such as
 * `rules[3].conditions.schedule.time_zone`, as the catalog and the links service would.
 */
export const routingBody = {
  rules: z.unknown().optional(),
  starts_at: z.unknown().optional(),
  expires_at: z.unknown().optional(),
  max_scans: z.unknown().optional(),
  expired_url: z.unknown().optional(),
  password: z.unknown().optional(),
};

/** Read-only fields of a QR code that only reads show. */
export const ROUTING_READ_ONLY = { password_protected: "read_only", lifecycle: "read_only" } as const;

const sentFields = (body: Record<string, unknown>) =>
  ROUTING_FIELDS.filter((field) => Object.hasOwn(body, field) && body[field] !== undefined);

/** The problems of a body's routing fields, by the routing package's checks; fields not sent are not checked. */
export function routingBodyProblems(body: Record<string, unknown>): FieldProblem[] {
  const sent = sentFields(body);
  if (sent.length === 0) return [];
  return routingProblems(Object.fromEntries(sent.map((field) => [field, body[field]])) as RoutingInput);
}

const instant = (value: unknown) => (typeof value === "string" ? timestampFromDate(new Date(value)) : undefined);

/**
 * The routing fields of a checked body as the proto, and the mask naming the fields it sent: a create
 * gives every field (one not sent means none), a PATCH replaces those it sends (null clears one).
 */
export function routingRequest(body: Record<string, unknown>): {
  routing?: MessageInitShape<typeof LinkRoutingSchema>;
  paths: RoutingField[];
} {
  const paths = sentFields(body);
  if (paths.length === 0) return { paths };
  return {
    paths,
    routing: {
      rules: ((body.rules as RuleInput[] | undefined) ?? []).map(ruleInitOf),
      startsAt: instant(body.starts_at),
      expiresAt: instant(body.expires_at),
      maxScans: typeof body.max_scans === "number" ? BigInt(body.max_scans) : undefined,
      expiredUrl: typeof body.expired_url === "string" ? body.expired_url : undefined,
      password: typeof body.password === "string" ? body.password : undefined,
    },
  };
}

/**
 * The rules of a routing message in the API's JSON, kept while the message lives. In the embedded platform
 * the catalog hands the edge the very message it keeps for each code while the code's stored routing is
 * unchanged (the catalog's StoredRoutings), so a list page maps only rules that changed; a message that
 * came over the network is new on every call and is mapped each time. The JSON is shared, never changed.
 */
const mappedRules = new WeakMap<LinkRouting, RuleInput[]>();

function rulesJson(routing: LinkRouting | undefined): RuleInput[] {
  if (!routing || routing.rules.length === 0) return [];
  let rules = mappedRules.get(routing);
  if (!rules) {
    rules = routing.rules.map(ruleJsonOf);
    mappedRules.set(routing, rules);
  }
  return rules;
}

/** A QR code's routing fields as reads show them; a code without routing shows empty rules and nulls. */
export function routingJson(qrCode: QrCode) {
  const routing = qrCode.routing;
  return {
    rules: rulesJson(routing),
    starts_at: dateTime(routing?.startsAt),
    expires_at: dateTime(routing?.expiresAt),
    max_scans: optionalCount(routing?.maxScans),
    expired_url: routing?.expiredUrl ?? null,
    password_protected: routing?.passwordProtected ?? false,
    lifecycle: enumToken(LinkLifecycleSchema, qrCode.lifecycle),
  };
}
