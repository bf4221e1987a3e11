/**
 * What a key may do. Every public route declares one of these; a key without it gets 403
 * insufficient_scope. Names are `<resource>:<action>`.
 */
export const SCOPES = [
  "account:read",
  "workspaces:read",
  "workspaces:write",
  "qr_codes:read",
  "qr_codes:write",
  "domains:read",
  "analytics:read",
  "export:read",
  "webhooks:read",
  "webhooks:write",
] as const;

export type Scope = (typeof SCOPES)[number];

/** Named sets of scopes, so keys can be issued by role. */
export const ROLES = {
  admin: SCOPES,
  viewer: SCOPES.filter((s) => s.endsWith(":read")),
} as const satisfies Record<string, readonly Scope[]>;

export type Role = keyof typeof ROLES;

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * Expands a requested list of scopes and `role:<name>` entries into a sorted, de-duplicated scope list;
 * an empty request means every scope. Returns the unknown entries instead when there are any.
 */
export function resolveScopes(requested: readonly string[]): { scopes: Scope[] } | { unknown: string[] } {
  if (requested.length === 0) return { scopes: [...SCOPES] };
  const scopes = new Set<Scope>();
  const unknown: string[] = [];
  for (const entry of requested) {
    if (isScope(entry)) scopes.add(entry);
    else if (entry.startsWith("role:") && entry.slice(5) in ROLES) {
      for (const scope of ROLES[entry.slice(5) as Role]) scopes.add(scope);
    } else unknown.push(entry);
  }
  return unknown.length > 0 ? { unknown } : { scopes: SCOPES.filter((s) => scopes.has(s)) };
}
