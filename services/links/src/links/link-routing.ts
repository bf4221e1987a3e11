import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LinkRoutingSchema, type LinkRouting } from "@qrplatform/api/links";
import { ruleInitOf } from "@qrplatform/platform";
import type { Rule } from "@qrplatform/routing";

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
