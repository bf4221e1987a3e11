import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { durationFromMs, durationMs, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { z } from "zod";
import {
  CreateWebhookEndpointResponseSchema,
  DeleteWebhookEndpointResponseSchema,
  GetWebhookDeliveryResponseSchema,
  GetWebhookEndpointResponseSchema,
  ListWebhookDeliveriesResponseSchema,
  ListWebhookEndpointsResponseSchema,
  RotateWebhookEndpointSecretResponseSchema,
  UpdateWebhookEndpointResponseSchema,
  WebhookDeliveryAttemptSchema,
  WebhookDeliverySchema,
  WebhookDeliveryOrder,
  WebhookEndpointSchema,
  WebhookEndpointStatus,
  type CreateWebhookEndpointRequest,
  type CreateWebhookEndpointResponse,
  type DeleteWebhookEndpointRequest,
  type DeleteWebhookEndpointResponse,
  type GetWebhookDeliveryRequest,
  type GetWebhookDeliveryResponse,
  type GetWebhookEndpointRequest,
  type GetWebhookEndpointResponse,
  type ListWebhookDeliveriesRequest,
  type ListWebhookDeliveriesResponse,
  type ListWebhookEndpointsRequest,
  type ListWebhookEndpointsResponse,
  type RotateWebhookEndpointSecretRequest,
  type RotateWebhookEndpointSecretResponse,
  type UpdateWebhookEndpointRequest,
  type UpdateWebhookEndpointResponse,
  type WebhookEndpoint,
} from "@qrplatform/api/catalog";
import {
  checkedBy,
  invalidArgument,
  isUuid,
  notFound,
  pageOf,
  readPageRequest,
  serviceError,
  uuidSchema,
  validate,
} from "@qrplatform/platform";
import type { CatalogDeps } from "../deps.js";
import { createKeySchema, keysKeptSince, requireSameRequest } from "../idempotency/create-keys.js";
import * as endpoints from "./webhook-endpoints.repository.js";
import { WEBHOOK_EVENT_TYPES } from "./webhook-events.js";
import { newWebhookSecret } from "./webhook-signature.js";
import { webhookHostProblem, webhookUrlProblem } from "./webhook-url.js";
import type { WebhookDeliveryAttemptRow, WebhookDeliveryRow, WebhookEndpointRow } from "./webhooks.table.js";

const DAY_MS = 24 * 60 * 60 * 1000;

function endpointToProto(row: WebhookEndpointRow): WebhookEndpoint {
  return create(WebhookEndpointSchema, {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    description: row.description ?? undefined,
    eventTypes: row.event_types,
    status: row.status === "enabled" ? WebhookEndpointStatus.ENABLED : WebhookEndpointStatus.DISABLED,
    disabledReason: row.disabled_reason ?? "",
    disabledMessage: row.disabled_message ?? "",
    createTime: timestampFromDate(row.created_at),
    updateTime: timestampFromDate(row.updated_at),
    heldDeliveriesDropped: row.held_deliveries_dropped,
    previousSecretExpireTime:
      row.previous_secret && row.previous_secret_expires_at && row.previous_secret_expires_at > new Date()
        ? timestampFromDate(row.previous_secret_expires_at)
        : undefined,
  });
}

function deliveryToProto(row: WebhookDeliveryRow, endpoint: WebhookEndpointRow) {
  const status = endpoints.deliveryLogStatus(row, endpoint);
  return create(WebhookDeliverySchema, {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    status,
    attempts: row.attempts,
    lastResponseStatus: row.last_response_status ?? 0,
    lastError: row.last_error ?? "",
    lastAttemptTime: row.last_attempt_at ? timestampFromDate(row.last_attempt_at) : undefined,
    nextAttemptTime: status === "pending" && row.next_attempt_at ? timestampFromDate(row.next_attempt_at) : undefined,
    createTime: timestampFromDate(row.created_at),
  });
}

function attemptToProto(row: WebhookDeliveryAttemptRow) {
  return create(WebhookDeliveryAttemptSchema, {
    attempt: row.attempt,
    attemptTime: timestampFromDate(row.attempted_at),
    duration: durationFromMs(row.duration_ms),
    responseStatus: row.response_status ?? 0,
    error: row.error ?? "",
  });
}

const eventTypes = z
  .array(z.enum(WEBHOOK_EVENT_TYPES, { message: `must each be one of ${WEBHOOK_EVENT_TYPES.join(", ")}` }))
  .min(1, "must name at least one event type")
  .refine((types) => new Set(types).size === types.length, {
    message: "must not repeat an event type",
    params: { reason: "duplicate" },
  });

const description = z.string().max(1000, "must be at most 1000 characters");

async function requireAllowedHost(deps: CatalogDeps, url: string): Promise<void> {
  const problem = await webhookHostProblem(url, deps.webhooks);
  if (problem) throw invalidArgument([{ field: "url", ...problem }]);
}

async function requireEndpoint(deps: CatalogDeps, accountId: string, endpointId: string): Promise<WebhookEndpointRow> {
  const row =
    isUuid(accountId) && isUuid(endpointId) ? await endpoints.findEndpoint(deps.db, accountId, endpointId) : undefined;
  if (!row) throw notFound("webhook endpoint");
  return row;
}

/**
 * Registers an endpoint with a new secret. A create with an idempotency key records it on the endpoint: a
 * repeat of the key returns that endpoint and its secret (kept to sign deliveries, so nothing more is
 * stored for the repeat), however the first call's answer was lost.
 */
export async function createWebhookEndpoint(
  deps: CatalogDeps,
  req: CreateWebhookEndpointRequest,
): Promise<CreateWebhookEndpointResponse> {
  const input = validate(
    z.object({
      accountId: uuidSchema,
      url: z.string().superRefine(checkedBy((url: string) => webhookUrlProblem(url, deps.webhooks))),
      description: description.optional(),
      eventTypes,
      idempotencyKey: createKeySchema.optional(),
    }),
    req,
  );
  await requireAllowedHost(deps, input.url);
  const made = await endpoints.insertEndpoint(
    deps.db,
    {
      id: randomUUID(),
      account_id: input.accountId,
      url: input.url,
      description: input.description ?? null,
      event_types: input.eventTypes,
      secret: newWebhookSecret(),
      idempotency_key: input.idempotencyKey?.key ?? null,
      idempotency_fingerprint: input.idempotencyKey?.fingerprint ?? null,
    },
    keysKeptSince(deps.now()),
  );
  if (made.outcome === "limit_reached") {
    throw serviceError(
      Code.ResourceExhausted,
      "webhook_endpoint_limit_reached",
      `An account may register ${endpoints.MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints; delete one first.`,
      { metadata: { limit: String(endpoints.MAX_ENDPOINTS_PER_ACCOUNT) } },
    );
  }
  if (made.outcome === "exists")
    requireSameRequest(made.endpoint.idempotency_fingerprint, input.idempotencyKey!.fingerprint);
  return create(CreateWebhookEndpointResponseSchema, {
    endpoint: endpointToProto(made.endpoint),
    secret: made.endpoint.secret,
  });
}

export async function getWebhookEndpoint(
  deps: CatalogDeps,
  req: GetWebhookEndpointRequest,
): Promise<GetWebhookEndpointResponse> {
  return create(GetWebhookEndpointResponseSchema, {
    endpoint: endpointToProto(await requireEndpoint(deps, req.accountId, req.endpointId)),
  });
}

export async function listWebhookEndpoints(
  deps: CatalogDeps,
  req: ListWebhookEndpointsRequest,
): Promise<ListWebhookEndpointsResponse> {
  const { accountId } = validate(z.object({ accountId: uuidSchema }), req);
  const page = readPageRequest(deps.pageTokens, req, accountId, "webhook_endpoints");
  const rows = await endpoints.listEndpoints(deps.db, accountId, { limit: page.fetch, after: page.after });
  const { items, nextPageToken } = pageOf(deps.pageTokens, rows, page.limit, accountId, "webhook_endpoints");
  return create(ListWebhookEndpointsResponseSchema, { endpoints: items.map(endpointToProto), nextPageToken });
}

export async function updateWebhookEndpoint(
  deps: CatalogDeps,
  req: UpdateWebhookEndpointRequest,
): Promise<UpdateWebhookEndpointResponse> {
  const input = validate(
    z.object({
      url: z
        .string()
        .superRefine(checkedBy((url: string) => webhookUrlProblem(url, deps.webhooks)))
        .optional(),
      description: description.optional(),
      eventTypes: req.replaceEventTypes
        ? eventTypes
        : z.array(z.string()).max(0, "is set only with replace_event_types"),
      status: z
        .enum(WebhookEndpointStatus)
        .refine((s) => s !== WebhookEndpointStatus.UNSPECIFIED, "must be enabled or disabled")
        .optional(),
    }),
    req,
  );
  const existing = await requireEndpoint(deps, req.accountId, req.endpointId);
  if (input.url !== undefined) await requireAllowedHost(deps, input.url);
  const now = deps.now();
  const changes = {
    ...(input.url !== undefined && { url: input.url }),
    ...(input.description !== undefined
      ? { description: input.description }
      : req.clearDescription
        ? { description: null }
        : {}),
    ...(req.replaceEventTypes && { event_types: input.eventTypes }),
    ...(input.status === WebhookEndpointStatus.DISABLED &&
      existing.status === "enabled" && {
        status: "disabled" as const,
        disabled_reason: "disabled_by_account",
        disabled_message: "Disabled by the account; enable it to resume deliveries.",
      }),
  };
  if (Object.keys(changes).length > 0)
    await endpoints.updateEndpoint(deps.db, existing.account_id, existing.id, changes);
  if (input.status === WebhookEndpointStatus.ENABLED)
    await endpoints.enableEndpoint(deps.db, existing.account_id, existing.id, now);
  return create(UpdateWebhookEndpointResponseSchema, {
    endpoint: endpointToProto(await requireEndpoint(deps, existing.account_id, existing.id)),
  });
}

export async function deleteWebhookEndpoint(
  deps: CatalogDeps,
  req: DeleteWebhookEndpointRequest,
): Promise<DeleteWebhookEndpointResponse> {
  const deleted =
    isUuid(req.accountId) &&
    isUuid(req.endpointId) &&
    (await endpoints.deleteEndpoint(deps.db, req.accountId, req.endpointId));
  if (!deleted) throw notFound("webhook endpoint");
  return create(DeleteWebhookEndpointResponseSchema, { endpointId: req.endpointId });
}

export async function rotateWebhookEndpointSecret(
  deps: CatalogDeps,
  req: RotateWebhookEndpointSecretRequest,
): Promise<RotateWebhookEndpointSecretResponse> {
  const lifetimeMs = req.previousSecretLifetime ? durationMs(req.previousSecretLifetime) : DAY_MS;
  if (!(lifetimeMs >= 0 && lifetimeMs <= 7 * DAY_MS)) {
    throw invalidArgument([
      { field: "previous_secret_lifetime", reason: "out_of_range", description: "must be 0 to 7 days" },
    ]);
  }
  const existing = await requireEndpoint(deps, req.accountId, req.endpointId);
  const secret = newWebhookSecret();
  const now = deps.now();
  const row = await endpoints.updateEndpoint(deps.db, existing.account_id, existing.id, {
    secret,
    previous_secret: lifetimeMs > 0 ? existing.secret : null,
    previous_secret_expires_at: lifetimeMs > 0 ? new Date(now.getTime() + lifetimeMs) : null,
  });
  if (!row) throw notFound("webhook endpoint");
  return create(RotateWebhookEndpointSecretResponseSchema, { endpoint: endpointToProto(row), secret });
}

export async function listWebhookDeliveries(
  deps: CatalogDeps,
  req: ListWebhookDeliveriesRequest,
): Promise<ListWebhookDeliveriesResponse> {
  const filter = validate(
    z.object({
      status: z
        .enum(["", ...endpoints.DELIVERY_LOG_STATUSES], {
          message: `must be one of ${endpoints.DELIVERY_LOG_STATUSES.join(", ")}`,
        })
        .transform((status) => status || undefined),
      order: z.enum(WebhookDeliveryOrder, { message: "must be oldest first or newest first" }),
    }),
    req,
  );
  const endpoint = await requireEndpoint(deps, req.accountId, req.endpointId);
  const newestFirst = filter.order === WebhookDeliveryOrder.NEWEST_FIRST;
  // A cursor is valid only for the endpoint, filter and order whose log issued it.
  const scope = `webhook_deliveries:${endpoint.id}:${filter.status ?? "all"}:${newestFirst ? "newest" : "oldest"}`;
  const page = readPageRequest(deps.pageTokens, req, endpoint.account_id, scope);
  const rows = await endpoints.listDeliveries(
    deps.db,
    endpoint.account_id,
    endpoint,
    { status: filter.status, newestFirst },
    { limit: page.fetch, after: page.after },
  );
  const { items, nextPageToken } = pageOf(deps.pageTokens, rows, page.limit, endpoint.account_id, scope);
  return create(ListWebhookDeliveriesResponseSchema, {
    deliveries: items.map((row) => deliveryToProto(row, endpoint)),
    nextPageToken,
  });
}

export async function getWebhookDelivery(
  deps: CatalogDeps,
  req: GetWebhookDeliveryRequest,
): Promise<GetWebhookDeliveryResponse> {
  const endpoint = await requireEndpoint(deps, req.accountId, req.endpointId);
  const found = isUuid(req.deliveryId)
    ? await endpoints.findDeliveryWithAttempts(deps.db, endpoint.account_id, endpoint.id, req.deliveryId)
    : undefined;
  if (!found) throw notFound("webhook delivery");
  return create(GetWebhookDeliveryResponseSchema, {
    delivery: deliveryToProto(found.delivery, endpoint),
    attempts: found.attempts.map(attemptToProto),
  });
}
