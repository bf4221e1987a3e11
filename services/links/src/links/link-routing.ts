import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LinkRoutingSchema, type LinkRouting } from "@qrplatform/api/links";
import { type Routing, type Rule, ruleInitOf, ruleJsonOf } from "@qrplatform/routing";

/** A link's routing columns. */
export interface RoutingColumns {
  rules: Rule[];
  starts_at: Date | null;
  expires_at: Date | null;
  max_scans: number | null;
  expired_url: string | null;
  password_hash: string | null;
}

/** The routing of a link without any. */
export const NO_ROUTING: RoutingColumns = {
  rules: [],
  starts_at: null,
  expires_at: null,
  max_scans: null,
  expired_url: null,
  password_hash: null,
};

/** The stored routing as reads return it: rules with their ids, and never the password or its hash. */
export function routingToProto(columns: RoutingColumns): LinkRouting {
  return create(LinkRoutingSchema, {
    rules: columns.rules.map(ruleInitOf),
    startsAt: columns.starts_at ? timestampFromDate(columns.starts_at) : undefined,
    expiresAt: columns.expires_at ? timestampFromDate(columns.expires_at) : undefined,
    maxScans: columns.max_scans === null ? undefined : BigInt(columns.max_scans),
    expiredUrl: columns.expired_url ?? undefined,
    passwordProtected: columns.password_hash !== null,
  });
}

/** Whether a link has any routing: rules, a lifetime, a scan limit, a fallback or a password. */
export function hasRouting(columns: RoutingColumns): boolean {
  return (
    columns.rules.length > 0 ||
    columns.starts_at !== null ||
    columns.expires_at !== null ||
    columns.max_scans !== null ||
    columns.expired_url !== null ||
    columns.password_hash !== null
  );
}

/** The routing with `merge` applied to every URL it sends visitors to, as the redirector is given it. */
export function withUrls(columns: RoutingColumns, merge: (url: string) => string): RoutingColumns {
  return {
    ...columns,
    rules: columns.rules.map((rule) => ({
      ...rule,
      ...(rule.destination_url !== undefined && { destination_url: merge(rule.destination_url) }),
      ...(rule.variants !== undefined && {
        variants: rule.variants.map((variant) => ({ ...variant, destination_url: merge(variant.destination_url) })),
      }),
    })),
    expired_url: columns.expired_url === null ? null : merge(columns.expired_url),
  };
}

/** Stored routing in @qrplatform/routing's shape, ready to compile. */
export function routingOfColumns(columns: RoutingColumns): Routing {
  return {
    rules: columns.rules,
    lifecycle: {
      starts_at: columns.starts_at?.toISOString() ?? null,
      expires_at: columns.expires_at?.toISOString() ?? null,
      max_scans: columns.max_scans,
      expired_url: columns.expired_url,
    },
    password_protected: columns.password_hash !== null,
  };
}

/**
 * A ResolveRedirect answer's routing in @qrplatform/routing's shape, ready to compile: what the redirector
 * decides on. Its values passed the routing check when they were written, so the tokens are the routing
 * package's own.
 */
export function routingOfProto(routing: LinkRouting): Routing {
  const iso = (t: LinkRouting["startsAt"]) => (t ? routingTimestampIso(t) : null);
  return {
    rules: routing.rules.map((rule) => ruleJsonOf(rule) as Rule),
    lifecycle: {
      starts_at: iso(routing.startsAt),
      expires_at: iso(routing.expiresAt),
      max_scans: routing.maxScans === undefined ? null : Number(routing.maxScans),
      expired_url: routing.expiredUrl ?? null,
    },
    password_protected: routing.passwordProtected,
  };
}

const routingTimestampIso = (t: NonNullable<LinkRouting["startsAt"]>) => timestampDate(t).toISOString();
