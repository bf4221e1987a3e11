// A typed client of the public REST API, built on openapi-fetch with the types that `npm run gen`
// generates from the OpenAPI document (services/edge/openapi/openapi.yaml).
import createClient, { type Client } from "openapi-fetch";
import type { components, operations, paths } from "./gen/openapi.js";

export type { components, operations, paths };
export { BULK_CREATE_MAX_ITEMS, CSV_COLUMNS } from "./csv-import-format.js";

/**
 * A client of the public API: `client.GET("/workspaces/{workspace_id}", { params: { path: { workspace_id } } })`.
 * Every POST takes an Idempotency-Key, so a create can be retried safely after a timeout with the same key:
 * `client.POST("/workspaces", { params: { header: { "Idempotency-Key": randomUUID() } }, body: { name } })`.
 * A replayed answer carries the header `Idempotent-Replayed: true`.
 */
export type ApiClient = Client<paths>;

/** The public Account. */
export type Account = components["schemas"]["Account"];
/** The public Workspace. */
export type Workspace = components["schemas"]["Workspace"];
/** The public QR code. */
export type QrCode = components["schemas"]["QrCode"];
/** The public custom Domain. */
export type Domain = components["schemas"]["Domain"];
/** A webhook endpoint (its secret appears only in the answers of create and rotate-secret). */
export type WebhookEndpoint = components["schemas"]["WebhookEndpoint"];
/** One entry of a webhook endpoint's delivery log. */
export type WebhookDelivery = components["schemas"]["WebhookDelivery"];
/** One delivery with every attempt made for it. */
export type WebhookDeliveryWithAttempts = components["schemas"]["WebhookDeliveryWithAttempts"];
/** The event types a webhook endpoint may subscribe to. */
export type WebhookEventType = components["schemas"]["WebhookEventType"];
/** The error envelope every error response uses. */
export type ApiErrorBody = components["schemas"]["Error"];

/** Where the API is and the key to call it with. */
export interface ApiClientOptions {
  /** The API's base URL, ending in the version segment: "https://qr.example.com/api/v1". */
  baseUrl: string;
  /** An API key (`qrp_…`), sent as `Authorization: Bearer <key>` on every request. */
  key: string;
  /** The fetch to use; the global one by default. */
  fetch?: typeof globalThis.fetch;
}

/** Builds a typed client of the public API that sends `key` on every request. */
export function createApiClient({ baseUrl, key, fetch }: ApiClientOptions): ApiClient {
  return createClient<paths>({
    baseUrl,
    headers: { Authorization: `Bearer ${key}` },
    ...(fetch && { fetch }),
  });
}
