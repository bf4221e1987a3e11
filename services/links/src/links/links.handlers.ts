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
  type GetLinkRequest,
  type GetLinkResponse,
  type UpdateLinkRequest,
  type UpdateLinkResponse,
} from "@qrplatform/api/links";
import { Code, invalidArgument, isUuid, notFound, serviceError, type FieldProblem } from "@qrplatform/platform";
import type { LinksDeps } from "../deps.js";
import { findDomainForShare, isServedHostname } from "../domains/domains.repository.js";
import { isSameHost } from "../domains/hostname.js";
import { destinationUrlProblem, queryParameterProblems } from "./destination-url.js";
import { linkStatusToken, linkToProto } from "./link-mapping.js";
import { deleteLink, findLink, insertLink, linkIdTaken, purgeLink, updateLink, vanitySlugTaken } from "./links.repository.js";
import { parseVanitySlug } from "./slugs.js";

/** Generated slugs collide about once in 10^12 creations; five attempts make a failure practically impossible. */
const SLUG_ATTEMPTS = 5;

const slugTaken = (slug: string) =>
  serviceError(Code.AlreadyExists, "slug_taken", `The slug "${slug}" is already used on this domain; choose another.`, {
    metadata: { vanity_slug: slug },
  });

interface CreateInput {
  accountId: string;
  /** The caller's id for the link, or undefined to generate one. */
  linkId: string | undefined;
  destinationUrl: string;
  queryParameters: Record<string, string>;
  vanity: { domainId: string; slug: string } | undefined;
}

/**
 * A destination on a host whose links we answer (the short domain, or any account's custom domain)
 * would make a chain of short links, or a loop when it points back at itself: refused.
 */
async function selfReferenceProblem(deps: LinksDeps, destinationUrl: string): Promise<FieldProblem | undefined> {
  // Compared canonically: a trailing dot, upper case or a Unicode spelling reaches the same host, and
  // when the short domain is a loopback name every loopback spelling reaches this process.
  const hostname = new URL(destinationUrl).hostname;
  if (!isSameHost(hostname, deps.shortDomainHostname) && !(await isServedHostname(deps.db, hostname))) return undefined;
  return {
    field: "destination_url",
    reason: "short_link_destination",
    description: "must not be a short link of this platform: point the code at the final page",
  };
}

/** Checks everything that can be checked without the database, reporting every bad field at once. */
function readCreateRequest(req: CreateLinkRequest): CreateInput {
  const problems: FieldProblem[] = [];
  if (!isUuid(req.accountId)) problems.push({ field: "account_id", reason: "invalid_format", description: "must be a UUID" });
  if (req.linkId !== undefined && !isUuid(req.linkId)) problems.push({ field: "link_id", reason: "invalid_format", description: "must be a UUID" });
  const destination = destinationUrlProblem(req.destinationUrl);
  if (destination) problems.push(destination);
  problems.push(...queryParameterProblems(req.queryParameters));

  let vanity: CreateInput["vanity"];
  const { vanityDomainId, vanitySlug } = req;
  if (vanityDomainId !== undefined && vanitySlug === undefined) {
    problems.push({ field: "vanity_slug", reason: "required", description: "is required with vanity_domain_id" });
  } else if (vanitySlug !== undefined && vanityDomainId === undefined) {
    problems.push({ field: "vanity_domain_id", reason: "required", description: "is required with vanity_slug" });
  } else if (vanityDomainId !== undefined && vanitySlug !== undefined) {
    const parsed = parseVanitySlug(vanitySlug);
    if ("problem" in parsed) problems.push(parsed.problem);
    if (!isUuid(vanityDomainId)) problems.push({ field: "vanity_domain_id", reason: "invalid_format", description: "must be a UUID" });
    if ("slug" in parsed) vanity = { domainId: vanityDomainId, slug: parsed.slug };
  }
  if (problems.length > 0) throw invalidArgument(problems);
  return {
    accountId: req.accountId,
    linkId: req.linkId?.toLowerCase(),
    destinationUrl: req.destinationUrl,
    queryParameters: req.queryParameters,
    vanity,
  };
}

export async function createLink(deps: LinksDeps, req: CreateLinkRequest): Promise<CreateLinkResponse> {
  const input = readCreateRequest(req);
  const loop = await selfReferenceProblem(deps, input.destinationUrl);
  if (loop) throw invalidArgument([loop]);
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
      if (await vanitySlugTaken(trx, domain.id, input.vanity.slug)) throw slugTaken(input.vanity.slug);
      hostname = domain.hostname;
    }
    if (input.linkId && (await linkIdTaken(trx, input.linkId))) {
      throw serviceError(Code.AlreadyExists, "link_exists", "A link with this id already exists.", { metadata: { link_id: input.linkId } });
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
      };
      if (await insertLink(trx, row)) return { ...row, query_parameters: input.queryParameters, hostname };
      // Either slug may have collided: a taken vanity slug is the caller's to fix, a generated one ours to retry.
      if (input.vanity && (await vanitySlugTaken(trx, input.vanity.domainId, input.vanity.slug))) throw slugTaken(input.vanity.slug);
    }
    throw serviceError(Code.Aborted, "slug_conflict", "Could not choose a unique slug; try again.");
  });
  return create(CreateLinkResponseSchema, { link: linkToProto(view, deps.urls) });
}

export async function getLink(deps: LinksDeps, req: GetLinkRequest): Promise<GetLinkResponse> {
  const row = isUuid(req.accountId) && isUuid(req.linkId) ? await findLink(deps.db, req.accountId, req.linkId) : undefined;
  if (!row) throw notFound("link");
  return create(GetLinkResponseSchema, { link: linkToProto(row, deps.urls) });
}

export async function updateLinkFields(deps: LinksDeps, req: UpdateLinkRequest): Promise<UpdateLinkResponse> {
  const problems: FieldProblem[] = [];
  if (req.destinationUrl !== undefined) {
    const problem = destinationUrlProblem(req.destinationUrl) ?? (await selfReferenceProblem(deps, req.destinationUrl));
    if (problem) problems.push(problem);
  }
  if (req.status !== undefined && req.status !== LinkStatus.ACTIVE && req.status !== LinkStatus.PAUSED) {
    problems.push({ field: "status", reason: "invalid_value", description: "must be active or paused" });
  }
  if (problems.length > 0) throw invalidArgument(problems);
  if (!isUuid(req.accountId) || !isUuid(req.linkId)) throw notFound("link");

  const changes = {
    ...(req.destinationUrl !== undefined && { destination_url: req.destinationUrl }),
    ...(req.status !== undefined && { status: linkStatusToken(req.status) }),
  };
  // An update that changes nothing leaves updated_at alone.
  const found = Object.keys(changes).length === 0 || (await updateLink(deps.db, req.accountId, req.linkId, changes, deps.now()));
  if (found && Object.keys(changes).length > 0) await deps.invalidations.publish({ linkIds: [req.linkId.toLowerCase()] });
  const row = found ? await findLink(deps.db, req.accountId, req.linkId) : undefined;
  if (!row) throw notFound("link");
  return create(UpdateLinkResponseSchema, { link: linkToProto(row, deps.urls) });
}

export async function deleteLinkById(deps: LinksDeps, req: DeleteLinkRequest): Promise<DeleteLinkResponse> {
  const valid = isUuid(req.accountId) && isUuid(req.linkId);
  const deleted =
    valid &&
    (req.purge
      ? await purgeLink(deps.db, req.accountId, req.linkId)
      : await deleteLink(deps.db, req.accountId, req.linkId, deps.now()));
  if (!deleted) throw notFound("link");
  await deps.invalidations.publish({ linkIds: [req.linkId.toLowerCase()] });
  return create(DeleteLinkResponseSchema, { linkId: req.linkId });
}
