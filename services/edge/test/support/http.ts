import { expect } from "vitest";

/** A response as the tests look at it. */
export interface ApiResponse {
  status: number;
  headers: Headers;
  // Tests read whatever the API sent; each assertion says what it expects.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** Calls the REST API with an optional key; JSON bodies are sent as JSON, strings as they are. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (typeof options.body === "string") body = options.body;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  if (res.headers.get("content-type")?.includes("application/json")) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed };
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
