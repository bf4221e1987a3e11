import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LinkSchema, LinkStatus, LinkStatusSchema, type Link } from "@qrplatform/api/links";
import { enumFromToken, enumToken } from "@qrplatform/platform";
import type { LinkUrls } from "../deps.js";
import { routingToProto } from "./link-routing.js";
import type { LinkView } from "./links.table.js";

export const linkStatusToken = (status: LinkStatus) => enumToken(LinkStatusSchema, status);
export const linkStatusOf = (token: string) =>
  (enumFromToken(LinkStatusSchema, token) ?? LinkStatus.UNSPECIFIED) as LinkStatus;

export function linkToProto(row: LinkView, urls: LinkUrls): Link {
  const canonicalUrl = urls.canonical(row.slug);
  return create(LinkSchema, {
    id: row.id,
    accountId: row.account_id,
    vanityDomainId: row.domain_id ?? undefined,
    slug: row.slug,
    vanitySlug: row.vanity_slug ?? undefined,
    destinationUrl: row.destination_url,
    queryParameters: row.query_parameters,
    status: linkStatusOf(row.status),
    vanityUrl: row.hostname && row.vanity_slug ? urls.vanity(row.hostname, row.vanity_slug) : canonicalUrl,
    canonicalUrl,
    createTime: timestampFromDate(row.created_at),
    updateTime: timestampFromDate(row.updated_at),
    routing: routingToProto(row),
  });
}
