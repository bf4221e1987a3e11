import type { Client } from "@connectrpc/connect";
import type { Request, RequestHandler } from "express";
import { z } from "zod";
import { type QrCodeStatus, QrCodeStatusSchema, type QrCode, type QrCodeService } from "@qrplatform/api/catalog";
import { enumFromToken, enumToken, enumTokens, uuidSchema, textSchema } from "@qrplatform/platform";
import { callerOf, type Caller } from "../http/auth.js";
import { requestKeyOf, type RequestKey } from "../http/idempotency.js";
import { jsonBody, parseInput, type FixedFields } from "../http/input.js";
import { listEnvelope, pageRequestOf } from "../http/pagination.js";
import { designBody, designFromBody, designJson } from "./design.js";
import { dateTime } from "./json.js";
import { ROUTING_READ_ONLY, routingBody, routingBodyProblems, routingJson, routingRequest } from "./qr-code-routing.js";
import { uuidParam } from "./params.js";

/** The public QR code. `qr_image_url` is the export endpoint of the code, called with the same key. */
export function qrCodeJson(qrCode: QrCode, apiBaseUrl: string) {
  const utm = Object.fromEntries(
    Object.entries({ source: qrCode.utm?.source, medium: qrCode.utm?.medium, campaign: qrCode.utm?.campaign }).filter(
      ([, v]) => v,
    ),
  );
  return {
    id: qrCode.id,
    account_id: qrCode.accountId,
    workspace_id: qrCode.workspaceId ?? null,
    name: qrCode.name,
    destination_url: qrCode.destinationUrl,
    status: enumToken(QrCodeStatusSchema, qrCode.status),
    tags: qrCode.tags,
    total_scans: Number(qrCode.totalScans),
    vanity_url: qrCode.vanityUrl,
    canonical_url: qrCode.canonicalUrl,
    qr_image_url: `${apiBaseUrl}/qr-codes/${qrCode.id}/export`,
    design: designJson(qrCode.design!),
    utm: Object.keys(utm).length > 0 ? utm : null,
    created_at: dateTime(qrCode.createTime),
    updated_at: dateTime(qrCode.updateTime),
    ...routingJson(qrCode),
  };
}

const READ_ONLY: FixedFields = {
  id: "read_only",
  account_id: "read_only",
  total_scans: "read_only",
  vanity_url: "read_only",
  canonical_url: "read_only",
  qr_image_url: "read_only",
  created_at: "read_only",
  updated_at: "read_only",
  ...ROUTING_READ_ONLY,
};

const CREATE_FIXED: FixedFields = { ...READ_ONLY, status: "read_only", workspace_id: "read_only" };
const UPDATE_FIXED: FixedFields = {
  ...READ_ONLY,
  design: "creation_only",
  utm: "creation_only",
  vanity_domain_id: "creation_only",
  vanity_slug: "creation_only",
};

/** A campaign value over REST is given or absent; gRPC's empty string for "not given" has no place here. */
const utmValue = textSchema().min(1, "must not be empty; leave the field out instead");

const createBody = z.strictObject({
  name: textSchema(),
  destination_url: textSchema(),
  tags: z.array(textSchema()).optional(),
  vanity_domain_id: uuidSchema.optional(),
  vanity_slug: textSchema().optional(),
  design: designBody.optional(),
  utm: z
    .strictObject({
      source: utmValue.optional(),
      medium: utmValue.optional(),
      campaign: utmValue.optional(),
    })
    .optional(),
  ...routingBody,
});

const updateBody = z.strictObject({
  name: textSchema().optional(),
  destination_url: textSchema().optional(),
  status: z.enum(enumTokens(QrCodeStatusSchema) as [string, ...string[]]).optional(),
  tags: z.array(textSchema()).optional(),
  workspace_id: uuidSchema.nullable().optional(),
  ...routingBody,
});

/** The filters of both QR-code lists; an empty `q` (a cleared search box) filters nothing. */
const filterQuery = z.object({
  q: textSchema().max(200, "must be at most 200 characters").optional(),
  status: z.enum(enumTokens(QrCodeStatusSchema) as [string, ...string[]]).optional(),
});
const listQuery = filterQuery.extend({ workspace_id: uuidSchema.optional() });

/** The QR-code routes' handlers. `apiBaseUrl` gives the absolute base of links the API hands out. */
export function qrCodeHandlers(qrCodes: Client<typeof QrCodeService>, apiBaseUrl: (req: Request) => string) {
  const json = (req: Request, qrCode: QrCode | undefined) => qrCodeJson(qrCode!, apiBaseUrl(req));

  const list = async (
    req: Request,
    accountId: string,
    workspaceId: string | undefined,
    filters: z.infer<typeof filterQuery>,
  ) => {
    const page = pageRequestOf(req);
    const found = await qrCodes.listQrCodes({
      accountId,
      workspaceId,
      nameContains: filters.q,
      status:
        filters.status === undefined ? undefined : (enumFromToken(QrCodeStatusSchema, filters.status) as QrCodeStatus),
      ...page,
    });
    return listEnvelope(
      found.qrCodes.map((qrCode) => json(req, qrCode)),
      found.nextPageToken,
    );
  };

  const listInWorkspace: RequestHandler = async (req, res) => {
    const workspaceId = uuidParam(req, "workspace_id");
    const filters = parseInput(filterQuery, { q: req.query.q, status: req.query.status });
    res.json(await list(req, callerOf(res).accountId, workspaceId, filters));
  };

  const listAll: RequestHandler = async (req, res) => {
    const { workspace_id, ...filters } = parseInput(listQuery, {
      workspace_id: req.query.workspace_id,
      q: req.query.q,
      status: req.query.status,
    });
    res.json(await list(req, callerOf(res).accountId, workspace_id, filters));
  };

  /**
   * Creates one QR code from a create body as the client sent it; the bulk create calls it for each item.
   * With the request's Idempotency-Key, the catalog makes at most one code for it.
   */
  const createOne = async (
    caller: Caller,
    workspaceId: string,
    input: unknown,
    idempotencyKey?: RequestKey,
  ): Promise<QrCode> => {
    const body = parseInput(createBody, input, CREATE_FIXED, routingBodyProblems);
    const { qrCode } = await qrCodes.createQrCode({
      accountId: caller.accountId,
      workspaceId,
      name: body.name,
      destinationUrl: body.destination_url,
      tags: body.tags ?? [],
      vanityDomainId: body.vanity_domain_id,
      vanitySlug: body.vanity_slug,
      design: designFromBody(body.design),
      utm: body.utm,
      // Known from authenticating the key: the catalog need not ask tenancy again.
      entitlements: {
        qrCodeCapacity: caller.plan.qrCodeCapacity,
        customLinkCapacity: caller.plan.customLinkCapacity,
        addons: caller.account.addons,
      },
      idempotencyKey,
      routing: routingRequest(body).routing,
    });
    return qrCode!;
  };

  const create: RequestHandler = async (req, res) => {
    const workspaceId = uuidParam(req, "workspace_id");
    const qrCode = await createOne(callerOf(res), workspaceId, jsonBody(req), requestKeyOf(res));
    res.status(201).location(`${req.baseUrl}/qr-codes/${qrCode.id}`).json(json(req, qrCode));
  };

  const get: RequestHandler = async (req, res) => {
    const { qrCode } = await qrCodes.getQrCode({ accountId: callerOf(res).accountId, qrCodeId: uuidParam(req, "id") });
    res.json(json(req, qrCode));
  };

  const update: RequestHandler = async (req, res) => {
    const qrCodeId = uuidParam(req, "id");
    const body = parseInput(updateBody, jsonBody(req), UPDATE_FIXED, routingBodyProblems);
    const { routing, paths } = routingRequest(body);
    const { qrCode } = await qrCodes.updateQrCode({
      accountId: callerOf(res).accountId,
      qrCodeId,
      name: body.name,
      destinationUrl: body.destination_url,
      status: body.status === undefined ? undefined : (enumFromToken(QrCodeStatusSchema, body.status) as QrCodeStatus),
      replaceTags: body.tags !== undefined,
      tags: body.tags ?? [],
      workspaceId: body.workspace_id ?? undefined,
      clearWorkspace: body.workspace_id === null,
      routing,
      routingMask: { paths },
    });
    res.json(json(req, qrCode));
  };

  const remove: RequestHandler = async (req, res) => {
    const { qrCodeId } = await qrCodes.deleteQrCode({
      accountId: callerOf(res).accountId,
      qrCodeId: uuidParam(req, "id"),
    });
    res.json({ id: qrCodeId, deleted: true });
  };

  return { listInWorkspace, listAll, create, createOne, get, update, remove };
}
