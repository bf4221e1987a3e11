import { randomUUID } from "node:crypto";
import type { LinkRouting } from "@qrplatform/api/links";
import {
  hashPassword,
  routingDestinations,
  type RoutingField,
  type RoutingInput,
  routingJsonOf,
  routingProblems,
  routingProblemsAsProto,
  type Rule,
} from "@qrplatform/routing";
import { invalidArgument, type FieldProblem } from "@qrplatform/platform";
import type { LinksDeps } from "../deps.js";
import { isServedHostname } from "../domains/domains.repository.js";
import type { RoutingColumns } from "./link-routing.js";

/**
 * Rule ids are the server's: a new link's rules carry none, and an update's rules carry either none (a
 * new rule) or the id of one of the link's rules (kept); the routing check refuses an id given twice.
 */
function ruleIdProblems(rules: readonly { id?: string }[], current: ReadonlySet<string>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  rules.forEach((rule, i) => {
    if (rule.id === undefined) return;
    const id = rule.id.toLowerCase();
    if (!current.has(id)) {
      problems.push({
        field: `rules[${i}].id`,
        reason: "unknown_rule",
        description: "is not the id of one of this code's rules; leave it out for a new rule",
      });
    }
  });
  return problems;
}

/**
 * URLs that point at a host whose links we answer would chain short links or loop: refused, as the
 * destination is. One lookup per host, however many rules name it.
 */
async function selfReferenceProblems(deps: LinksDeps, json: RoutingInput): Promise<FieldProblem[]> {
  const served = new Map<string, Promise<boolean>>();
  const problems: FieldProblem[] = [];
  for (const { field, url } of routingDestinations(json)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      continue; // the routing check reports it
    }
    const key = `${parsed.hostname}:${parsed.port}`;
    if (!served.has(key))
      served.set(
        key,
        deps.isShortDomain(parsed)
          ? Promise.resolve(true)
          : isServedHostname(deps.db, parsed.hostname.replace(/\.$/, "").toLowerCase()),
      );
    if (await served.get(key)) {
      problems.push({
        field,
        reason: "short_link_destination",
        description: "must not be a short link of this platform: point the code at the final page",
      });
    }
  }
  return problems;
}

/**
 * The routing columns a create or an update writes: the named fields of the request, checked (every
 * problem at once, on its proto path), rule ids kept or assigned, the password hashed. `current` is the
 * link's rule ids (none for a new link).
 */
export async function routingColumnsOf(
  deps: LinksDeps,
  routing: LinkRouting | undefined,
  named: ReadonlySet<RoutingField>,
  current: ReadonlySet<string> = new Set(),
  existing: Pick<RoutingColumns, "starts_at" | "expires_at"> = { starts_at: null, expires_at: null },
): Promise<Partial<RoutingColumns>> {
  if (named.size === 0) return {};
  // Enum values came as tokens: an unknown one is "unspecified", which the check refuses on its path.
  const json = routingJsonOf(routing, named);
  // The lifetime is checked as a whole: an update of one end is compared with the other end as stored.
  const lifetime = {
    starts_at: named.has("starts_at") ? json.starts_at : (existing.starts_at?.toISOString() ?? null),
    expires_at: named.has("expires_at") ? json.expires_at : (existing.expires_at?.toISOString() ?? null),
  };
  const rules = json.rules ?? [];
  const problems = [
    ...routingProblems({ ...json, ...lifetime }),
    ...ruleIdProblems(rules, current),
    ...(await selfReferenceProblems(deps, json)),
  ];
  if (problems.length > 0) throw invalidArgument(routingProblemsAsProto(problems));

  const columns: Partial<RoutingColumns> = {};
  if (named.has("rules"))
    columns.rules = rules.map(
      (rule): Rule => ({
        ...rule,
        conditions: rule.conditions ?? {},
        id: rule.id === undefined ? randomUUID() : rule.id.toLowerCase(),
      }),
    );
  if (named.has("starts_at")) columns.starts_at = json.starts_at === null ? null : new Date(json.starts_at as string);
  if (named.has("expires_at"))
    columns.expires_at = json.expires_at === null ? null : new Date(json.expires_at as string);
  if (named.has("max_scans")) columns.max_scans = json.max_scans as number | null;
  if (named.has("expired_url")) columns.expired_url = json.expired_url as string | null;
  if (named.has("password"))
    columns.password_hash = json.password === null ? null : await hashPassword(json.password as string);
  return columns;
}
