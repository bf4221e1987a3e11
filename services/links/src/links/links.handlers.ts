import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import {
  CreateLinkResponseSchema,
  DeleteLinkResponseSchema,
  GetLinkResponseSchema,
  LinkStatus,
  UpdateLinkResponseSchema,
  type CreateLinkRequest,
  type CreateLinkResponse,
  type DeleteLinkRequest,
  type DeleteLinkResponse,
  ResolveLinkForVisitorResponseSchema,
  type VisitOutcome,
  VisitOutcomeSchema,
  type GetLinkRequest,
  type ResolveLinkForVisitorRequest,
  type ResolveLinkForVisitorResponse,
  type GetLinkResponse,
  type UpdateLinkRequest,
  type UpdateLinkResponse,
} from "@qrplatform/api/links";
import { z } from "zod";
import {
  checkedBy,
  Code,
  destinationUrlProblem,
  enumFromToken,
  enumToken,
  invalidArgument,
  isUuid,
  notFound,
  parsedBy,
  parseVanitySlug,
  requireVanityPair,
  serviceError,
  uuidSchema,
  validate,
} from "@qrplatform/platform";
import type { LinksDeps } from "../deps.js";
import { findDomainForShare, isServedHostname } from "../domains/domains.repository.js";
import {
  ALL_ROUTING_FIELDS,
  compileRouting,
  decide,
  type Device,
  namedRoutingFields,
  type Os,
} from "@qrplatform/routing";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { DeviceTypeSchema, OperatingSystemSchema } from "@qrplatform/api/links";
import { reservedScans } from "../redirects/scan-reservations.repository.js";
import { queryParameterProblems, redirectLocation } from "./destination-url.js";
import { linkStatusToken, linkToProto } from "./link-mapping.js";
import { NO_ROUTING, routingOfColumns, withUrls } from "./link-routing.js";
import * as links from "./links.repository.js";
import { routingColumnsOf } from "./routing-input.js";

/** Generated slugs collide about once in 10^12 creations; five attempts make a failure practically impossible. */
const SLUG_ATTEMPTS = 5;

const slugTaken = (slug: string) =>
  serviceError(Code.AlreadyExists, "slug_taken", `The slug "${slug}" is already used on this domain; choose another.`, {
    metadata: { vanity_slug: slug },
  });

/**
 * A destination on a host whose links we answer (the short domain, or any account's custom domain)
 * would make a chain of short links, or a loop when it points back at itself: refused. This rule asks
 * the database, so it is checked after the request's schema.
 */
async function refuseSelfReference(deps: LinksDeps, destinationUrl: string): Promise<void> {
  // The redirector's own rule for its short domain decides: hosts compared canonically (a trailing dot,
  // upper case, any loopback spelling when the short domain is loopback) and the port too, since a
  // loopback name on another port is another program of this machine, not a short link.
  const { hostname, port } = new URL(destinationUrl);
  if (!deps.isShortDomain({ hostname, port }) && !(await isServedHostname(deps.db, hostname))) return;
  throw invalidArgument([
    {
      field: "destination_url",
      reason: "short_link_destination",
      description: "must not be a short link of this platform: point the code at the final page",
    },
  ]);
}

const destinationUrl = z.string().superRefine(checkedBy(destinationUrlProblem));

/** A vanity slug in its stored (lower-case) form. */
const vanitySlug = z.string().transform(
  parsedBy((requested: string) => {
    const parsed = parseVanitySlug(requested);
    return "slug" in parsed ? { value: parsed.slug } : parsed;
  }),
);

/** CreateLink: everything that can be checked without the database, every bad field reported at once. */
const createLinkRequest = z
  .object({
    accountId: uuidSchema,
    linkId: uuidSchema.optional(),
    destinationUrl,
    queryParameters: z.record(z.string(), z.string()).superRefine(checkedBy(queryParameterProblems)),
    vanityDomainId: uuidSchema.optional(),
    vanitySlug: vanitySlug.optional(),
  })
  .superRefine(requireVanityPair)
  .transform(({ vanityDomainId, vanitySlug, ...rest }) => ({
    ...rest,
    vanity:
      vanityDomainId !== undefined && vanitySlug !== undefined
        ? { domainId: vanityDomainId, slug: vanitySlug }
        : undefined,
  }));

export async function createLink(deps: LinksDeps, req: CreateLinkRequest): Promise<CreateLinkResponse> {
  const input = validate(createLinkRequest, req);
  await refuseSelfReference(deps, input.destinationUrl);
  const routing = {
    ...NO_ROUTING,
    ...(req.routing && (await routingColumnsOf(deps, req.routing, ALL_ROUTING_FIELDS))),
  };
  const view = await deps.db.transaction().execute(async (trx) => {
    let hostname: string | null = null;
    if (input.vanity) {
      // The share lock keeps the domain from being removed until this link is committed.
      const domain = await findDomainForShare(trx, { accountId: input.accountId }, input.vanity.domainId);
      if (!domain) throw notFound("domain");
      if (domain.state !== "verified") {
        throw serviceError(
          Code.FailedPrecondition,
          "domain_not_verified",
          `The domain ${domain.hostname} is not verified; add its DNS TXT challenge and verify it first.`,
          { metadata: { domain_id: domain.id } },
        );
      }
      if (await links.vanitySlugTaken(trx, domain.id, input.vanity.slug)) throw slugTaken(input.vanity.slug);
      hostname = domain.hostname;
    }
    if (input.linkId && (await links.linkIdTaken(trx, input.linkId))) {
      throw serviceError(Code.AlreadyExists, "link_exists", "A link with this id already exists.", {
        metadata: { link_id: input.linkId },
      });
    }
    const now = deps.now();
    for (let attempt = 0; attempt < SLUG_ATTEMPTS; attempt++) {
      const row = {
        id: input.linkId ?? randomUUID(),
        account_id: input.accountId,
        slug: deps.generateSlug(),
        domain_id: input.vanity?.domainId ?? null,
        vanity_slug: input.vanity?.slug ?? null,
        destination_url: input.destinationUrl,
        query_parameters: JSON.stringify(input.queryParameters),
        status: linkStatusToken(LinkStatus.ACTIVE),
        created_at: now,
        updated_at: now,
        deleted_at: null,
        ...routing,
        rules: JSON.stringify(routing.rules),
      };
      if (await links.insertLink(trx, row))
        return { ...row, query_parameters: input.queryParameters, rules: routing.rules, hostname };
      // Either slug may have collided: a taken vanity slug is the caller's to fix, a generated one ours to retry.
      if (input.vanity && (await links.vanitySlugTaken(trx, input.vanity.domainId, input.vanity.slug)))
        throw slugTaken(input.vanity.slug);
    }
    throw serviceError(Code.Aborted, "slug_conflict", "Could not choose a unique slug; try again.");
  });
  return create(CreateLinkResponseSchema, { link: linkToProto(view, deps.urls) });
}

export async function getLink(deps: LinksDeps, req: GetLinkRequest): Promise<GetLinkResponse> {
  const row =
    isUuid(req.accountId) && isUuid(req.linkId) ? await links.findLink(deps.db, req.accountId, req.linkId) : undefined;
  if (!row) throw notFound("link");
  return create(GetLinkResponseSchema, { link: linkToProto(row, deps.urls) });
}

const updateLinkRequest = z.object({
  destinationUrl: destinationUrl.optional(),
  status: z
    .enum(LinkStatus)
    .refine((status) => status === LinkStatus.ACTIVE || status === LinkStatus.PAUSED, {
      message: "must be active or paused",
      params: { reason: "invalid_value" },
    })
    .optional(),
});

export async function updateLink(deps: LinksDeps, req: UpdateLinkRequest): Promise<UpdateLinkResponse> {
  validate(updateLinkRequest, req);
  const named = namedRoutingFields(req.routingMask);
  if (req.destinationUrl !== undefined) await refuseSelfReference(deps, req.destinationUrl);
  if (!isUuid(req.accountId) || !isUuid(req.linkId)) throw notFound("link");

  let routing = {};
  if (named.size > 0) {
    // Kept rule ids and the other end of the lifetime are checked against the link as it is.
    const current = await links.findLink(deps.db, req.accountId, req.linkId);
    if (!current) throw notFound("link");
    const { rules, ...rest } = await routingColumnsOf(
      deps,
      req.routing,
      named,
      new Set(current.rules.map((rule) => rule.id)),
      current,
    );
    routing = { ...rest, ...(rules && { rules: JSON.stringify(rules) }) };
  }
  const changes = {
    ...(req.destinationUrl !== undefined && { destination_url: req.destinationUrl }),
    ...(req.status !== undefined && { status: linkStatusToken(req.status) }),
    ...routing,
  };
  // An update that changes nothing leaves updated_at alone.
  const found =
    Object.keys(changes).length === 0 ||
    (await links.updateLink(deps.db, req.accountId, req.linkId, changes, deps.now()));
  if (found && Object.keys(changes).length > 0) await deps.invalidations.publish({ linkIds: [req.linkId] });
  const row = found ? await links.findLink(deps.db, req.accountId, req.linkId) : undefined;
  if (!row) throw notFound("link");
  return create(UpdateLinkResponseSchema, { link: linkToProto(row, deps.urls) });
}

export async function deleteLink(deps: LinksDeps, req: DeleteLinkRequest): Promise<DeleteLinkResponse> {
  const valid = isUuid(req.accountId) && isUuid(req.linkId);
  const deleted =
    valid &&
    (req.purge
      ? await links.purgeLink(deps.db, req.accountId, req.linkId)
      : await links.deleteLink(deps.db, req.accountId, req.linkId, deps.now()));
  if (!deleted) throw notFound("link");
  await deps.invalidations.publish({ linkIds: [req.linkId] });
  return create(DeleteLinkResponseSchema, { linkId: req.linkId });
}

const resolveLinkForVisitorRequest = z.object({
  visitor: z
    .object({
      country: z
        .string()
        .regex(/^([A-Z]{2})?$/, { message: "must be an ISO 3166-1 alpha-2 country code in upper case, or empty" }),
      language: z
        .string()
        .regex(/^([a-z]{2,3})?$/, { message: "must be a primary language subtag in lower case, or empty" }),
      visitorKey: z.string().max(200, "must be at most 200 characters"),
    })
    .optional(),
});

/**
 * Where a visitor would go, by the redirector's own decision, without a scan being counted or a place under
 * the scan limit taken: the places already taken decide whether the limit is reached, as on the redirect path. A paused link answers as the redirector does:
 * nowhere, as a default with no destination.
 */
export async function resolveLinkForVisitor(
  deps: LinksDeps,
  req: ResolveLinkForVisitorRequest,
): Promise<ResolveLinkForVisitorResponse> {
  validate(resolveLinkForVisitorRequest, req);
  const link =
    isUuid(req.accountId) && isUuid(req.linkId) ? await links.findLink(deps.db, req.accountId, req.linkId) : undefined;
  if (!link) throw notFound("link");
  const merge = (url: string) => redirectLocation(url, link.query_parameters);
  const routing = compileRouting(routingOfColumns(withUrls(link, merge)));
  // The places taken under the scan limit, which the redirector itself goes by.
  const scans = link.max_scans === null ? 0 : ((await reservedScans(deps.db, [link.id])).get(link.id) ?? 0);
  const visitor = req.visitor;
  // The proto's enums hold exactly the rules' tokens; unspecified is an unknown device and the other OS.
  const decision = decide(
    routing,
    {
      country: visitor?.country ?? "",
      device: visitor?.device ? (enumToken(DeviceTypeSchema, visitor.device) as Device) : "",
      os: visitor?.os ? (enumToken(OperatingSystemSchema, visitor.os) as Os) : "other",
      language: visitor?.language ?? "",
      key: visitor?.visitorKey ?? "",
    },
    req.at ? timestampDate(req.at).getTime() : deps.now().getTime(),
    { destinationUrl: merge(link.destination_url), scans },
  );
  return create(ResolveLinkForVisitorResponseSchema, {
    outcome: enumFromToken(VisitOutcomeSchema, decision.outcome) as VisitOutcome,
    destinationUrl: decision.destination_url ?? "",
    ruleId: decision.rule_id ?? undefined,
    variant: decision.variant ?? undefined,
  });
}
