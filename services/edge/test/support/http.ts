import { expect } from "vitest";
import { createApiClient, type ApiClient } from "@qrplatform/api-client";
import { apiBasePath, validateResponse } from "./openapi.js";

/** A response as the tests look at it. */
export interface ApiResponse {
  status: number;
  headers: Headers;
  // Tests read whatever the API sent; each assertion says what it expects.
  body: any;
}

/**
 * Checks a response against the OpenAPI document when its URL is under the API's base path; other
 * URLs (/healthz, /docs, short links) are not part of the document.
 */
function checkAgainstDocument(method: string, url: URL, status: number, headers: Headers, body: unknown): void {
  if (url.pathname !== apiBasePath && !url.pathname.startsWith(`${apiBasePath}/`)) return;
  validateResponse(method, `${url.pathname.slice(apiBasePath.length) || "/"}${url.search}`, status, headers, body);
}

/** The body as the tests read it: parsed when the response says it is JSON, else the text ("" for none, as after HEAD). */
function parseBody(text: string, headers: Headers): unknown {
  return text && headers.get("content-type")?.includes("application/json") ? JSON.parse(text) : text;
}

/** Images and archives stay bytes; everything else is read as parseBody reads it. */
function readBody(bytes: ArrayBuffer, headers: Headers): unknown {
  const type = headers.get("content-type") ?? "";
  if ((type.startsWith("image/") || type === "application/zip") && bytes.byteLength > 0) return Buffer.from(bytes);
  return parseBody(new TextDecoder().decode(bytes), headers);
}

/**
 * Calls the REST API with an optional key; JSON bodies are sent as JSON, strings and bytes as they are. An image
 * or ZIP response's body is a Buffer. Every response of the API is validated against the OpenAPI document: one it does not describe fails the test.
 */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | Uint8Array | undefined;
  if (typeof options.body === "string" || options.body instanceof Uint8Array) body = options.body;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const url = new URL(`${baseUrl}${path}`);
  const res = await fetch(url, { method, headers, body });
  const parsed = readBody(await res.arrayBuffer(), res.headers);
  checkAgainstDocument(method, url, res.status, res.headers, parsed);
  return { status: res.status, headers: res.headers, body: parsed };
}

/**
 * The typed client generated from the OpenAPI document, for `baseUrl` (ending in /api/v1) and `key`.
 * Like `call`, it validates every response against the document.
 */
export function typedClient(baseUrl: string, key: string): ApiClient {
  const client = createApiClient({ baseUrl, key });
  client.use({
    async onResponse({ request, response }) {
      const parsed = parseBody(await response.clone().text(), response.headers);
      checkAgainstDocument(request.method, new URL(request.url), response.status, response.headers, parsed);
      return undefined;
    },
  });
  return client;
}

/** Asserts the public error envelope: status, code, a message, and the request id of the header. */
export function expectError(res: ApiResponse, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe("string");
  expect(res.body.error.message.length).toBeGreaterThan(0);
  expect(res.body.error.request_id).toBe(res.headers.get("x-request-id"));
}

/** The fields named in a validation error's details. */
export function invalidFields(res: ApiResponse): string[] {
  return (res.body.error.details?.fields ?? []).map((f: { field: string }) => f.field);
}
