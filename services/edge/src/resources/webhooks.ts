import { durationFromMs, durationMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import type { RequestHandler } from "express";
import { z } from "zod";
import { textSchema } from "@qrplatform/platform";
import {
  WebhookDeliveryOrder,
  WebhookEndpointStatus,
  type WebhookDelivery,
  type WebhookDeliveryAttempt,
  type WebhookEndpoint,
  type WebhookEndpointService,
} from "@qrplatform/api/catalog";
import { callerOf } from "../http/auth.js";
import { requestKeyOf } from "../http/idempotency.js";
import { jsonBody, parseInput } from "../http/input.js";
import { listEnvelope, pageRequestOf } from "../http/pagination.js";
import { dateTime } from "./json.js";
import { uuidParam } from "./params.js";

/** The public webhook endpoint. The secret is never part of it: create and rotate answer it once, beside. */
export function webhookEndpointJson(endpoint: WebhookEndpoint) {
  const enabled = endpoint.status === WebhookEndpointStatus.ENABLED;
  return {
    id: endpoint.id,
    account_id: endpoint.accountId,
    url: endpoint.url,
    description: endpoint.description ?? null,
    event_types: endpoint.eventTypes,
    status: enabled ? "enabled" : "disabled",
    disabled_reason: enabled ? null : endpoint.disabledReason || null,
    disabled_message: enabled ? null : endpoint.disabledMessage || null,
    previous_secret_expires_at: dateTime(endpoint.previousSecretExpireTime),
    held_deliveries_dropped: endpoint.heldDeliveriesDropped,
    created_at: dateTime(endpoint.createTime),
    updated_at: dateTime(endpoint.updateTime),
  };
}

/** One entry of an endpoint's delivery log. */
export function webhookDeliveryJson(delivery: WebhookDelivery) {
  return {
    id: delivery.id,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    last_response_status: delivery.lastResponseStatus || null,
    last_error: delivery.lastError || null,
    last_attempt_at: dateTime(delivery.lastAttemptTime),
    next_attempt_at: dateTime(delivery.nextAttemptTime),
    created_at: dateTime(delivery.createTime),
  };
}

/** One attempt of a delivery, as its log shows it. */
function webhookAttemptJson(attempt: WebhookDeliveryAttempt) {
  return {
    attempt: attempt.attempt,
    attempted_at: dateTime(attempt.attemptTime),
    duration_ms: attempt.duration ? durationMs(attempt.duration) : 0,
    response_status: attempt.responseStatus || null,
    error: attempt.error || null,
  };
}

const READ_ONLY = {
  id: "read_only",
  account_id: "read_only",
  status: "read_only",
  disabled_reason: "read_only",
  disabled_message: "read_only",
  previous_secret_expires_at: "read_only",
  held_deliveries_dropped: "read_only",
  secret: "read_only",
  created_at: "read_only",
  updated_at: "read_only",
} as const;
const { status: _status, ...UPDATE_READ_ONLY } = READ_ONLY;

// The edge checks shape; the catalog owns the rules (URL, event types, lengths).
const createBody = z.strictObject({
  url: textSchema(),
  description: textSchema("multi").nullish(),
  event_types: z.array(textSchema()),
});

const updateBody = z.strictObject({
  url: textSchema().optional(),
  description: textSchema("multi").nullable().optional(),
  event_types: z.array(textSchema()).optional(),
  status: z.enum(["enabled", "disabled"]).optional(),
});

// The edge checks shape; the catalog owns which statuses there are.
const deliveriesQuery = z.object({
  // Empty would mean "every status" to the catalog; over REST that is leaving the parameter out.
  status: textSchema().min(1, "must be pending, paused, succeeded or failed").optional(),
  order: z.enum(["oldest_first", "newest_first"], { message: "must be oldest_first or newest_first" }).optional(),
});

const MAX_LIFETIME_SECONDS = 7 * 24 * 60 * 60;
const rotateBody = z.strictObject({
  previous_secret_expires_in: z
    .number()
    .int("must be a whole number of seconds")
    .min(0, "must be 0 to 604800 seconds")
    .max(MAX_LIFETIME_SECONDS, "must be 0 to 604800 seconds")
    .optional(),
});

/** The /webhooks routes' handlers. */
export function webhookHandlers(endpoints: Client<typeof WebhookEndpointService>) {
  const list: RequestHandler = async (req, res) => {
    const found = await endpoints.listWebhookEndpoints({ accountId: callerOf(res).accountId, ...pageRequestOf(req) });
    res.json(listEnvelope(found.endpoints.map(webhookEndpointJson), found.nextPageToken));
  };

  const create: RequestHandler = async (req, res) => {
    const body = parseInput(createBody, jsonBody(req), READ_ONLY);
    const { endpoint, secret } = await endpoints.createWebhookEndpoint({
      accountId: callerOf(res).accountId,
      url: body.url,
      description: body.description ?? undefined,
      eventTypes: body.event_types,
      // With the request's Idempotency-Key the catalog registers at most one endpoint for it, and a
      // retry gets that endpoint's secret.
      idempotencyKey: requestKeyOf(res),
    });
    res
      .status(201)
      .location(`${req.baseUrl}/webhooks/${endpoint!.id}`)
      .json({ ...webhookEndpointJson(endpoint!), secret });
  };

  const get: RequestHandler = async (req, res) => {
    const { endpoint } = await endpoints.getWebhookEndpoint({
      accountId: callerOf(res).accountId,
      endpointId: uuidParam(req, "id"),
    });
    res.json(webhookEndpointJson(endpoint!));
  };

  const update: RequestHandler = async (req, res) => {
    const endpointId = uuidParam(req, "id");
    const body = parseInput(updateBody, jsonBody(req), UPDATE_READ_ONLY);
    const { endpoint } = await endpoints.updateWebhookEndpoint({
      accountId: callerOf(res).accountId,
      endpointId,
      url: body.url,
      description: body.description ?? undefined,
      clearDescription: body.description === null,
      replaceEventTypes: body.event_types !== undefined,
      eventTypes: body.event_types ?? [],
      status:
        body.status === undefined
          ? undefined
          : body.status === "enabled"
            ? WebhookEndpointStatus.ENABLED
            : WebhookEndpointStatus.DISABLED,
    });
    res.json(webhookEndpointJson(endpoint!));
  };

  const remove: RequestHandler = async (req, res) => {
    const { endpointId } = await endpoints.deleteWebhookEndpoint({
      accountId: callerOf(res).accountId,
      endpointId: uuidParam(req, "id"),
    });
    res.json({ id: endpointId, deleted: true });
  };

  const rotateSecret: RequestHandler = async (req, res) => {
    const endpointId = uuidParam(req, "id");
    // No body at all is allowed (the previous secret then signs for 24 hours), whatever its Content-Type.
    const empty =
      req.headers["content-length"] === "0" ||
      (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined);
    const body = parseInput(rotateBody, empty ? {} : jsonBody(req));
    const { endpoint, secret } = await endpoints.rotateWebhookEndpointSecret({
      accountId: callerOf(res).accountId,
      endpointId,
      previousSecretLifetime:
        body.previous_secret_expires_in === undefined
          ? undefined
          : durationFromMs(body.previous_secret_expires_in * 1000),
    });
    res.json({ ...webhookEndpointJson(endpoint!), secret });
  };

  const listDeliveries: RequestHandler = async (req, res) => {
    const endpointId = uuidParam(req, "id");
    const query = parseInput(deliveriesQuery, { status: req.query.status, order: req.query.order });
    const found = await endpoints.listWebhookDeliveries({
      accountId: callerOf(res).accountId,
      endpointId,
      ...pageRequestOf(req),
      status: query.status ?? "",
      order: query.order === "newest_first" ? WebhookDeliveryOrder.NEWEST_FIRST : WebhookDeliveryOrder.OLDEST_FIRST,
    });
    res.json(listEnvelope(found.deliveries.map(webhookDeliveryJson), found.nextPageToken));
  };

  const getDelivery: RequestHandler = async (req, res) => {
    const endpointId = uuidParam(req, "id");
    const deliveryId = uuidParam(req, "delivery_id");
    const { delivery, attempts } = await endpoints.getWebhookDelivery({
      accountId: callerOf(res).accountId,
      endpointId,
      deliveryId,
    });
    res.json({ ...webhookDeliveryJson(delivery!), attempt_log: attempts.map(webhookAttemptJson) });
  };

  return { list, create, get, update, remove, rotateSecret, listDeliveries, getDelivery };
}
