import { create, fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { QrCodeSchema, QrCodeStatus, QrCodeStatusSchema, UtmSchema, type QrCode } from "@qrplatform/api/catalog";
import { LinkLifecycle, LinkRoutingSchema, LinkStatus, type LinkRouting } from "@qrplatform/api/links";
import { DesignSchema } from "@qrplatform/api/rendering";
import { enumFromToken, enumToken } from "@qrplatform/platform";
import type { ProvisionedQrCodeRow } from "./qr-codes.table.js";
import type { StoredRoutings } from "./stored-routings.js";

export const statusToken = (status: QrCodeStatus) => enumToken(QrCodeStatusSchema, status);

/** A QR code's status as its link's status: a paused code's link stops redirecting. */
export function linkStatusOf(status: QrCodeStatus): LinkStatus {
  return status === QrCodeStatus.PAUSED ? LinkStatus.PAUSED : LinkStatus.ACTIVE;
}

/** A link's routing as catalog.qr_codes.routing keeps it: null when it has none. */
export function routingColumn(routing: LinkRouting | undefined): string | null {
  if (!routing) return null;
  const json = toJson(LinkRoutingSchema, routing) as Record<string, unknown>;
  return Object.keys(json).length === 0 ? null : JSON.stringify(json);
}

/**
 * Where a code stands at `now` with `totalScans` counted (undefined when they were not asked for): the
 * routing package's lifecycle rule, starts_at inclusive, expires_at exclusive, the limit reached at max_scans.
 */
export function lifecycleOf(
  routing: LinkRouting | undefined,
  now: Date,
  totalScans: bigint | undefined,
): LinkLifecycle {
  const at = now.getTime();
  if (routing?.startsAt && at < timestampDate(routing.startsAt).getTime()) return LinkLifecycle.SCHEDULED;
  if (routing?.expiresAt && at >= timestampDate(routing.expiresAt).getTime()) return LinkLifecycle.EXPIRED;
  if (routing?.maxScans !== undefined) {
    if (totalScans === undefined) return LinkLifecycle.UNSPECIFIED;
    if (totalScans >= routing.maxScans) return LinkLifecycle.LIMIT_REACHED;
  }
  return LinkLifecycle.LIVE;
}

/**
 * A stored QR code as the proto, with its scans as the links service counts them (undefined when not asked
 * for, read as 0), its lifecycle at `now`, and its routing as `routings` keeps it.
 */
export function qrCodeToProto(
  row: ProvisionedQrCodeRow,
  totalScans: bigint | undefined,
  now: Date,
  routings: StoredRoutings,
): QrCode {
  const routing = routings.of(row.id, row.routing);
  return create(QrCodeSchema, {
    id: row.id,
    accountId: row.account_id,
    workspaceId: row.workspace_id ?? undefined,
    name: row.name,
    destinationUrl: row.destination_url,
    status: enumFromToken(QrCodeStatusSchema, row.status) as QrCodeStatus,
    tags: row.tags,
    totalScans: totalScans ?? 0n,
    vanityUrl: row.vanity_url,
    canonicalUrl: row.canonical_url,
    linkId: row.link_id,
    design: fromJson(DesignSchema, row.design as JsonValue),
    utm: row.utm ? create(UtmSchema, row.utm) : undefined,
    createTime: timestampFromDate(row.created_at),
    updateTime: timestampFromDate(row.updated_at),
    routing,
    lifecycle: lifecycleOf(routing, now, totalScans),
  });
}
