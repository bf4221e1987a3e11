import { create } from "@bufbuild/protobuf";
import {
  ResolveRedirectResponseSchema,
  type ResolveRedirectRequest,
  type ResolveRedirectResponse,
} from "@qrplatform/api/links";
import { notFound } from "@qrplatform/platform";
import type { LinksDeps } from "../deps.js";
import { redirectLocation } from "../links/destination-url.js";
import { hasRouting, routingToProto, withUrls } from "../links/link-routing.js";
import { couldBeSlug } from "../links/slugs.js";
import { parseRequestHost } from "./hosts.js";
import { findLiveLinkBySlug, findLiveLinkByVanitySlug } from "./redirects.repository.js";

/**
 * Where a scanned link sends its visitor: a generated slug on the default short domain, or a vanity
 * slug on a verified custom domain. Every miss is the same NOT_FOUND, whatever the reason.
 */
export async function resolveRedirect(deps: LinksDeps, req: ResolveRedirectRequest): Promise<ResolveRedirectResponse> {
  const host = parseRequestHost(req.host);
  if (!host || !couldBeSlug(req.slug)) throw notFound("link");
  const slug = req.slug.toLowerCase();
  const link = deps.isShortDomain(host)
    ? await findLiveLinkBySlug(deps.db, slug)
    : await findLiveLinkByVanitySlug(deps.db, host.hostname, slug);
  if (!link) throw notFound("link");
  const paused = link.status !== "active";
  const merge = (url: string) => redirectLocation(url, link.query_parameters);
  return create(ResolveRedirectResponseSchema, {
    linkId: link.id,
    accountId: link.account_id,
    paused,
    location: paused ? "" : merge(link.destination_url),
    routing: !paused && hasRouting(link) ? routingToProto(withUrls(link, merge)) : undefined,
    passwordHash: (!paused && link.password_hash) || "",
  });
}
