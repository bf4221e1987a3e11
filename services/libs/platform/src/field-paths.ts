/**
 * The one place field paths are translated. A field problem names its field by the path the caller
 * wrote, so each door names it in its own spelling:
 * - gRPC callers see **proto paths**: field names in proto spelling joined by dots, list and map
 *   elements by index or key (`design.frame.label_top`, `tags.3`, `scans.0.link_id`). Services check
 *   the protobuf-es message, whose fields have camelCase local names, so {@link protoFieldPath} turns a
 *   path of local names into a proto path.
 * - REST clients see **public paths**: the proto path renamed where the API names a field otherwise,
 *   and camelCase inside `design`, whose keys the contract spells that way. {@link publicFieldPath}
 *   turns a proto path into a public one; the edge applies it to every problem a service reports.
 *   Routing fields (issue 35) are top-level fields of a QR code in the API, with list indexes in
 *   brackets as the contract fixes them: `routing.rules.3.conditions.schedule.time_zone` is
 *   `rules[3].conditions.schedule.time_zone`.
 *   Problems the edge finds itself are already in public spelling: its request shapes use the
 *   contract's names.
 */

/** A protobuf-es local field name in proto spelling: `logoUrl` -> `logo_url`; indexes and keys pass as they are. */
export function protoFieldName(segment: PropertyKey): string {
  return String(segment).replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A path of protobuf-es local names (as a zod issue reports it) as a proto path: ["frame", "labelTop"] -> "frame.label_top". */
export function protoFieldPath(segments: readonly PropertyKey[]): string {
  return segments.map(protoFieldName).join(".");
}

/**
 * Request fields the REST API names differently from the proto, by proto path: list requests take
 * `limit` and `cursor`, a QR-code list's name search is `q`, a QR code's domain is its
 * `vanity_domain_id`, an analytics range is `from`..`to`.
 */
export const PUBLIC_FIELD_NAMES: Readonly<Record<string, string>> = {
  page_size: "limit",
  page_token: "cursor",
  name_contains: "q",
  domain_id: "vanity_domain_id",
  from_date: "from",
  to_date: "to",
};

/** Proto paths under this prefix are a QR code's routing fields, which the API shows at the top level. */
const ROUTING_PREFIX = "routing.";

/** Proto paths under this prefix are spelt in camelCase by the public API (the contract's design keys). */
const CAMEL_CASE_PREFIX = "design.";

/**
 * A proto path as the REST API names the field: renamed where the API differs (`page_size` -> `limit`),
 * camelCase inside `design` (`design.frame.label_top` -> `design.frame.labelTop`), otherwise unchanged.
 */
export function publicFieldPath(protoPath: string): string {
  if (protoPath.startsWith(ROUTING_PREFIX))
    return protoPath.slice(ROUTING_PREFIX.length).replace(/\.(\d+)(?=\.|$)/g, "[$1]");
  if (protoPath.startsWith(CAMEL_CASE_PREFIX)) return protoPath.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  return PUBLIC_FIELD_NAMES[protoPath] ?? protoPath;
}
