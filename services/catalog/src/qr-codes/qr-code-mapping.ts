import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { QrCodeSchema, QrCodeStatus, QrCodeStatusSchema, UtmSchema, type QrCode } from "@qrplatform/api/catalog";
import { LinkStatus } from "@qrplatform/api/links";
import { DesignSchema } from "@qrplatform/api/rendering";
import { enumFromToken, enumToken } from "@qrplatform/platform";
import type { ProvisionedQrCodeRow } from "./qr-codes.table.js";

export const statusToken = (status: QrCodeStatus) => enumToken(QrCodeStatusSchema, status);

/** A QR code's status as its link's status: a paused code's link stops redirecting. */
export function linkStatusOf(status: QrCodeStatus): LinkStatus {
  return status === QrCodeStatus.PAUSED ? LinkStatus.PAUSED : LinkStatus.ACTIVE;
}

/** A stored QR code as the proto, with its scans as the links service counts them. */
export function qrCodeToProto(row: ProvisionedQrCodeRow, totalScans = 0n): QrCode {
  return create(QrCodeSchema, {
    id: row.id,
    accountId: row.account_id,
    workspaceId: row.workspace_id ?? undefined,
    name: row.name,
    destinationUrl: row.destination_url,
    status: enumFromToken(QrCodeStatusSchema, row.status) as QrCodeStatus,
    tags: row.tags,
    totalScans,
    vanityUrl: row.vanity_url,
    canonicalUrl: row.canonical_url,
    linkId: row.link_id,
    design: fromJson(DesignSchema, row.design as JsonValue),
    utm: row.utm ? create(UtmSchema, row.utm) : undefined,
    createTime: timestampFromDate(row.created_at),
    updateTime: timestampFromDate(row.updated_at),
  });
}
