import type { LinkRouting } from "@qrplatform/api/links";
import { type FieldProblem, invalidArgument } from "@qrplatform/platform";
import {
  ALL_ROUTING_FIELDS,
  type RoutingField,
  routingJsonOf,
  routingProblems,
  routingProblemsAsProto,
} from "@qrplatform/routing";

export { namedRoutingFields } from "@qrplatform/routing";

/** What a create names: every routing field, an unset one meaning none. */
export const CREATE_ROUTING_FIELDS = ALL_ROUTING_FIELDS;

/**
 * Checks the routing fields a request names as the links service checks them, before a create reserves a
 * place or an update marks the code pending, so a request that can never succeed costs nothing. What needs
 * the links service's data (kept rule ids, the stored other end of the lifetime, URLs on our own domains)
 * is left to it. A create's rules must not carry ids: the links service assigns them.
 */
export function checkRouting(
  routing: LinkRouting | undefined,
  named: ReadonlySet<RoutingField>,
  mode: "create" | "update",
): void {
  const json = routingJsonOf(routing, named);
  const problems: FieldProblem[] = routingProblems(json);
  if (mode === "create") {
    (json.rules ?? []).forEach((rule, i) => {
      if (rule.id !== undefined)
        problems.push({
          field: `rules[${i}].id`,
          reason: "unknown_rule",
          description: "must be left out: a new code's rules get their ids from the server",
        });
    });
  }
  if (problems.length > 0) throw invalidArgument(routingProblemsAsProto(problems));
}
