import { randomUUID } from "node:crypto";
import { create, toJson } from "@bufbuild/protobuf";
import { Code, type ConnectError } from "@connectrpc/connect";
import { z } from "zod";
import {
  AccountEntitlementsSchema,
  CreateQrCodeResponseSchema,
  DeleteQrCodeResponseSchema,
  GetCapacityResponseSchema,
  GetQrCodeResponseSchema,
  ListQrCodesResponseSchema,
  MoveQrCodeResponseSchema,
  QrCodeStatus,
  UpdateQrCodeRequestSchema,
  UpdateQrCodeResponseSchema,
  type CreateQrCodeRequest,
  type CreateQrCodeResponse,
  type DeleteQrCodeRequest,
  type DeleteQrCodeResponse,
  type GetCapacityRequest,
  type GetCapacityResponse,
  type GetQrCodeRequest,
  type GetQrCodeResponse,
  type ListQrCodesRequest,
  type ListQrCodesResponse,
  type MoveQrCodeRequest,
  type MoveQrCodeResponse,
  type UpdateQrCodeRequest,
  type UpdateQrCodeResponse,
  type QrCode,
  type AccountEntitlements,
} from "@qrplatform/api/catalog";
import { DesignSchema } from "@qrplatform/api/rendering";
import {
  checkedBy,
  destinationUrlProblem,
  isUuid,
  notFound,
  pageOf,
  readPageRequest,
  serviceError,
  textSchema,
  uuidSchema,
  validate,
  requireVanityPair,
  vanitySlugProblem,
} from "@qrplatform/platform";
import type { CatalogDeps } from "../deps.js";
import { createInProgress, createKeySchema, keysKeptSince, requireSameRequest } from "../idempotency/create-keys.js";
import * as workspaces from "../workspaces/workspaces.repository.js";
import { checkDesign, dependsOnContent } from "./design-check.js";
import { linkStatusOf, qrCodeToProto, routingColumn, statusToken } from "./qr-code-mapping.js";
import { checkRouting, CREATE_ROUTING_FIELDS, namedRoutingFields } from "./qr-code-routing.js";
import { presentUtm, qrCodeName, qrCodeTags, qrCodeUtm, utmQueryParameters } from "./qr-code-rules.js";
import { finishDelete, isDecided, LINK_CALL_TIMEOUT_MS, undoCreate } from "./link-consistency.js";
import * as qrCodes from "./qr-codes.repository.js";
import type { CapacityRefusal } from "./qr-codes.repository.js";
import type { ProvisionedQrCodeRow, QrCodeRow } from "./qr-codes.table.js";

// The link's own fields are checked here as the links service checks them, before a place is reserved:
// a create that can never succeed then costs what any refused request costs.
const createSchema = z
  .object({
    accountId: uuidSchema,
    workspaceId: uuidSchema.optional(),
    name: qrCodeName,
    destinationUrl: z.string().superRefine(checkedBy(destinationUrlProblem)),
    tags: qrCodeTags,
    utm: qrCodeUtm.optional(),
    vanityDomainId: uuidSchema.optional(),
    vanitySlug: z.string().superRefine(checkedBy(vanitySlugProblem)).optional(),
    idempotencyKey: createKeySchema.optional(),
  })
  .superRefine(requireVanityPair);

function capacityError(refusal: CapacityRefusal): ConnectError {
  const metadata = { limit: String(refusal.max), used: String(refusal.used) };
  return refusal.limit === "qr_codes"
    ? serviceError(
        Code.ResourceExhausted,
        "qr_code_limit_reached",
        `This account's plan allows ${refusal.max} QR codes and all are in use; delete one or upgrade the plan.`,
        { metadata },
      )
    : serviceError(
        Code.ResourceExhausted,
        "link_limit_reached",
        `This account's plan allows ${refusal.max} QR codes on custom domains and all are in use.`,
        { metadata },
      );
}

async function requireWorkspace(deps: CatalogDeps, accountId: string, workspaceId: string): Promise<void> {
  if (!(await workspaces.findWorkspace(deps.db, accountId, workspaceId))) throw notFound("workspace");
}

/**
 * Creates a QR code and its short link as one unit. The code is reserved first, holding a place in
 * the account's capacity and the id its link will get; then the link is made, then the code
 * completed. A failure undoes what was done; a crash leaves the reservation, which the reconciler
 * undoes, so neither a code without a link nor a link without a code survives, and no capacity is lost.
 * A create with an idempotency key records it in the reservation's transaction: one code per key.
 */
export async function createQrCode(deps: CatalogDeps, req: CreateQrCodeRequest): Promise<CreateQrCodeResponse> {
  const input = validate(createSchema, req);
  if (req.routing) checkRouting(req.routing, CREATE_ROUTING_FIELDS, "create");
  const entitlements = await entitlementsOf(deps, input.accountId, req.entitlements);
  if (input.workspaceId) await requireWorkspace(deps, input.accountId, input.workspaceId);
  const design = await checkDesign(deps.checkDesign, req.design, entitlements.addons);
  const utm = presentUtm(input.utm);

  const reservation = { account_id: input.accountId, id: randomUUID(), link_id: randomUUID() };
  // The create's token: only while the reservation still carries it may this create complete it.
  const reservedAt = deps.now();
  const reserved = await qrCodes.reserve(
    deps.db,
    {
      ...reservation,
      workspace_id: input.workspaceId ?? null,
      name: input.name,
      destination_url: req.destinationUrl,
      status: statusToken(QrCodeStatus.ACTIVE),
      tags: input.tags,
      vanity_domain_id: req.vanityDomainId ?? null,
      design: JSON.stringify(toJson(DesignSchema, design)),
      utm: utm && JSON.stringify(utm),
      pending_operation: "create",
      pending_since: reservedAt,
      idempotency_key: input.idempotencyKey?.key ?? null,
      idempotency_fingerprint: input.idempotencyKey?.fingerprint ?? null,
    },
    {
      qrCodes: entitlements.qrCodeCapacity === undefined ? undefined : Number(entitlements.qrCodeCapacity),
      customLinks: entitlements.customLinkCapacity === undefined ? undefined : Number(entitlements.customLinkCapacity),
    },
    keysKeptSince(deps.now()),
  );
  if (reserved.outcome === "refused") throw capacityError(reserved.refusal);
  if (reserved.outcome === "no_workspace") throw notFound("workspace");
  if (reserved.outcome === "exists") return repeatedCreate(deps, reserved.code, input.idempotencyKey!.fingerprint);

  let linkMade = false;
  try {
    const { link } = await deps.links.createLink(
      {
        accountId: input.accountId,
        linkId: reservation.link_id,
        destinationUrl: req.destinationUrl,
        queryParameters: utmQueryParameters(utm),
        vanityDomainId: req.vanityDomainId,
        vanitySlug: req.vanitySlug,
        routing: req.routing,
      },
      { timeoutMs: LINK_CALL_TIMEOUT_MS },
    );
    linkMade = true;
    // Whether a logo leaves the code recoverable depends on the symbol's version, so on the link it encodes.
    if (dependsOnContent(design)) await deps.rendering.validateDesign({ design, content: link!.vanityUrl });
    const row = await qrCodes.complete(deps.db, input.accountId, reservation.id, reservedAt, {
      vanity_url: link!.vanityUrl,
      canonical_url: link!.canonicalUrl,
      destination_url: link!.destinationUrl,
      routing: routingColumn(link!.routing),
    });
    if (!row)
      throw serviceError(Code.Unavailable, "create_abandoned", "The QR code could not be created in time; try again.");
    return create(CreateQrCodeResponseSchema, { qrCode: qrCodeToProto(row, 0n, deps.now(), deps.routings) });
  } catch (error) {
    const outcomeKnown = linkMade || isDecided(error);
    await undoCreate(deps, reservation, outcomeKnown).catch((cleanup: unknown) => {
      deps.logger.warn(
        { err: cleanup, qrCodeId: reservation.id },
        "could not undo a failed QR-code create; the reconciler will",
      );
    });
    throw error;
  }
}

/**
 * The answer to a create whose idempotency key already made a code: that code, as it is now, whatever
 * became of the first call's answer. A key first used for another request is refused, and a create
 * still running under the key asks for a retry once it is done.
 */
async function repeatedCreate(
  deps: CatalogDeps,
  code: QrCodeRow,
  fingerprint: Uint8Array,
): Promise<CreateQrCodeResponse> {
  requireSameRequest(code.idempotency_fingerprint, fingerprint);
  if (code.pending_operation === "create") throw createInProgress();
  const [qrCode] = await withScanTotals(deps, code.account_id, [code as ProvisionedQrCodeRow]);
  return create(CreateQrCodeResponseSchema, { qrCode });
}

/**
 * The account's capacities and add-ons: as the caller sent them (the edge knows them from the key it
 * authenticated), else from tenancy.
 */
async function entitlementsOf(
  deps: CatalogDeps,
  accountId: string,
  sent: AccountEntitlements | undefined,
): Promise<AccountEntitlements> {
  if (sent) return sent;
  const { account, plan } = await deps.tenancy.getAccount({ accountId });
  return create(AccountEntitlementsSchema, {
    qrCodeCapacity: plan?.qrCodeCapacity,
    customLinkCapacity: plan?.customLinkCapacity,
    addons: account?.addons ?? [],
  });
}

/** QR codes as protos with their scan totals: kept ones, and the others asked of the links service in one call a page. */
async function withScanTotals(deps: CatalogDeps, accountId: string, rows: ProvisionedQrCodeRow[]): Promise<QrCode[]> {
  const totals = await deps.scanTotals(
    accountId,
    rows.map((row) => row.link_id),
  );
  const now = deps.now();
  return rows.map((row) => qrCodeToProto(row, totals[row.link_id] ?? 0n, now, deps.routings));
}

export async function getQrCode(deps: CatalogDeps, req: GetQrCodeRequest): Promise<GetQrCodeResponse> {
  const row =
    isUuid(req.accountId) && isUuid(req.qrCodeId)
      ? await qrCodes.find(deps.db, req.accountId, req.qrCodeId)
      : undefined;
  if (!row) throw notFound("QR code");
  const [qrCode] = req.skipScanTotals
    ? [qrCodeToProto(row, undefined, deps.now(), deps.routings)]
    : await withScanTotals(deps, req.accountId, [row]);
  return create(GetQrCodeResponseSchema, { qrCode });
}

// Schemas are built once: zod compiles each one when first used, which costs more than the parse itself.
/** The longest name search: a name is at most 200 characters, so a longer text matches nothing. */
const MAX_NAME_CONTAINS = 200;
const listSchema = z.object({
  accountId: uuidSchema,
  workspaceId: uuidSchema.optional(),
  nameContains: textSchema().max(MAX_NAME_CONTAINS, `must be at most ${MAX_NAME_CONTAINS} characters`),
  status: z.enum(QrCodeStatus),
});
const capacitySchema = z.object({ accountId: uuidSchema });

export async function listQrCodes(deps: CatalogDeps, req: ListQrCodesRequest): Promise<ListQrCodesResponse> {
  const { accountId, workspaceId, nameContains, status } = validate(listSchema, req);
  if (workspaceId) await requireWorkspace(deps, accountId, workspaceId);
  const filter = {
    workspaceId,
    nameContains: nameContains || undefined,
    status: status === QrCodeStatus.UNSPECIFIED ? undefined : statusToken(status),
  };
  // A cursor is valid only for the list (account, workspace and filters) that issued it: under another
  // filter its position would skip or repeat codes.
  const filters =
    filter.nameContains || filter.status ? ` ${JSON.stringify([filter.status, filter.nameContains])}` : "";
  const scope = `qr_codes:${workspaceId ?? "*"}${filters}`;
  const page = readPageRequest(deps.pageTokens, req, accountId, scope);
  const rows = await qrCodes.list(deps.db, accountId, filter, { limit: page.fetch, after: page.after });
  const { items, nextPageToken } = pageOf(deps.pageTokens, rows, page.limit, accountId, scope);
  return create(ListQrCodesResponseSchema, { qrCodes: await withScanTotals(deps, accountId, items), nextPageToken });
}

const updateSchema = z.object({
  name: qrCodeName.optional(),
  status: z
    .enum(QrCodeStatus)
    .refine((s) => s !== QrCodeStatus.UNSPECIFIED, "must be active or paused")
    .optional(),
  tags: qrCodeTags,
  workspaceId: uuidSchema.optional(),
});

/**
 * Changes a QR code. Destination, status and routing live on the link too: the change is marked pending on
 * the code, made on the link (which may refuse it, leaving the code as it was), then applied to the
 * code. A crash or a failure with no answer in between leaves the mark, and the reconciler makes the
 * code show what the link does. Name, tags and workspace (a move) are the catalog's alone.
 */
export async function updateQrCode(deps: CatalogDeps, req: UpdateQrCodeRequest): Promise<UpdateQrCodeResponse> {
  const input = validate(updateSchema, req);
  const routingFields = namedRoutingFields(req.routingMask);
  if (routingFields.size > 0) checkRouting(req.routing, routingFields, "update");
  const existing =
    isUuid(req.accountId) && isUuid(req.qrCodeId)
      ? await qrCodes.find(deps.db, req.accountId, req.qrCodeId)
      : undefined;
  if (!existing) throw notFound("QR code");
  if (input.workspaceId) await requireWorkspace(deps, req.accountId, input.workspaceId);

  let destinationUrl: string | undefined;
  let routing: string | null | undefined;
  let token: Date | undefined;
  if (req.destinationUrl !== undefined || input.status !== undefined || routingFields.size > 0) {
    token = deps.now();
    if (!(await qrCodes.markPending(deps.db, req.accountId, req.qrCodeId, "update", token))) throw notFound("QR code");
    try {
      const { link } = await deps.links.updateLink(
        {
          accountId: req.accountId,
          linkId: existing.link_id,
          destinationUrl: req.destinationUrl,
          status: input.status === undefined ? undefined : linkStatusOf(input.status),
          routing: req.routing,
          routingMask: req.routingMask,
        },
        { timeoutMs: LINK_CALL_TIMEOUT_MS },
      );
      if (req.destinationUrl !== undefined) destinationUrl = link!.destinationUrl;
      if (routingFields.size > 0) routing = routingColumn(link!.routing);
    } catch (error) {
      if (isDecided(error)) await qrCodes.clearPending(deps.db, req.accountId, req.qrCodeId, token);
      throw error;
    }
  }
  const changes = {
    ...(input.name !== undefined && { name: input.name }),
    ...(destinationUrl !== undefined && { destination_url: destinationUrl }),
    ...(input.status !== undefined && { status: statusToken(input.status) }),
    ...(routing !== undefined && { routing }),
    ...(req.replaceTags && { tags: input.tags }),
    ...(input.workspaceId !== undefined
      ? { workspace_id: input.workspaceId }
      : req.clearWorkspace
        ? { workspace_id: null }
        : {}),
  };
  const row =
    Object.keys(changes).length === 0
      ? existing
      : await qrCodes.update(deps.db, req.accountId, req.qrCodeId, changes, token);
  // A link changed above keeps its pending mark, which the reconciler settles from the link.
  if (row === "no_workspace") throw notFound("workspace");
  if (!row) throw notFound("QR code");
  const [qrCode] = await withScanTotals(deps, req.accountId, [row]);
  return create(UpdateQrCodeResponseSchema, { qrCode });
}

/** Deprecated in the proto for UpdateQrCode, which moves a code too: a move is an update of the workspace alone. */
export async function moveQrCode(deps: CatalogDeps, req: MoveQrCodeRequest): Promise<MoveQrCodeResponse> {
  const update = create(UpdateQrCodeRequestSchema, {
    accountId: req.accountId,
    qrCodeId: req.qrCodeId,
    workspaceId: req.workspaceId,
    clearWorkspace: req.workspaceId === undefined,
  });
  return create(MoveQrCodeResponseSchema, { qrCode: (await updateQrCode(deps, update)).qrCode });
}

/**
 * Deletes a QR code: marked pending, then the link goes (so the code stops redirecting even if the
 * rest fails), then the code. A delete that stopped halfway is finished by a retry or by the reconciler.
 */
export async function deleteQrCode(deps: CatalogDeps, req: DeleteQrCodeRequest): Promise<DeleteQrCodeResponse> {
  const marked =
    isUuid(req.accountId) && isUuid(req.qrCodeId)
      ? await qrCodes.markPending(deps.db, req.accountId, req.qrCodeId, "delete", deps.now())
      : undefined;
  if (!marked) throw notFound("QR code");
  if (!(await finishDelete(deps, marked))) throw notFound("QR code");
  return create(DeleteQrCodeResponseSchema, { qrCodeId: req.qrCodeId });
}

export async function getCapacity(deps: CatalogDeps, req: GetCapacityRequest): Promise<GetCapacityResponse> {
  const { accountId } = validate(capacitySchema, req);
  const { plan } = await deps.tenancy.getAccount({ accountId });
  const used = await qrCodes.count(deps.db, accountId);
  return create(GetCapacityResponseSchema, {
    capacity: { qrCodesUsed: BigInt(used), qrCodesLimit: plan?.qrCodeCapacity },
  });
}
