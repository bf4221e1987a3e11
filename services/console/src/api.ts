// The console's one door to the platform: the typed client generated from the OpenAPI document, with
// the user's key, at this origin's /api/v1. Every answer's RateLimit headers update the quota shown
// in the header; every error becomes an ApiError carrying the request id for support.
import { createApiClient, type ApiClient, type ApiErrorBody } from "@qrplatform/api-client";

/** What the last answer said about the key's hourly request limit. */
export interface Quota {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/** One field the API refused, with its reason, as `details.fields[]` names it. */
export interface FieldProblem {
  field: string;
  reason: string;
  message: string;
}

/** An API error answer, or a request that got no answer at all (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | undefined,
    readonly details: Record<string, unknown> | undefined,
  ) {
    super(message);
  }

  /** The refused fields, when the API named them. */
  get fields(): FieldProblem[] {
    const fields = this.details?.fields;
    return Array.isArray(fields) ? (fields as FieldProblem[]) : [];
  }
}

/** Reads the RateLimit headers of an answer, when it has them. */
export function quotaOf(headers: Headers): Quota | undefined {
  const limit = headers.get("RateLimit-Limit");
  const remaining = headers.get("RateLimit-Remaining");
  if (limit === null || remaining === null) return undefined;
  return {
    limit: Number(limit),
    remaining: Number(remaining),
    resetSeconds: Number(headers.get("RateLimit-Reset") ?? 0),
  };
}

/** A client of this origin's API with `key`, reporting each answer's quota to `onQuota`. */
export function consoleClient(
  key: string,
  onQuota: (quota: Quota) => void,
  // The page's own fetch unless a test hands in a stand-in API.
  {
    baseUrl = `${location.origin}/api/v1`,
    fetch = ((...args) => globalThis.fetch(...args)) as typeof globalThis.fetch,
  } = {},
): ApiClient {
  return createApiClient({
    baseUrl,
    key,
    fetch: async (input) => {
      const response = await fetch(input);
      const quota = quotaOf(response.headers);
      if (quota) onQuota(quota);
      return response;
    },
  });
}

/** The error of a failed call, as an ApiError. */
export function apiErrorOf(error: unknown, response: Response | undefined): ApiError {
  const body = (error as ApiErrorBody | undefined)?.error;
  const requestId = body?.request_id ?? response?.headers.get("X-Request-ID") ?? undefined;
  if (body) return new ApiError(response?.status ?? 0, body.code, body.message, requestId, body.details);
  return new ApiError(
    response?.status ?? 0,
    "unexpected_answer",
    `The API answered ${response?.status ?? "nothing"}.`,
    requestId,
    undefined,
  );
}

/** Resolves an openapi-fetch call to its data, or throws its ApiError (also when no answer came). */
export async function call<T>(request: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let answer: { data?: T; error?: unknown; response: Response };
  try {
    answer = await request;
  } catch (cause) {
    throw new ApiError(0, "network_error", `The API could not be reached (${String(cause)}).`, undefined, undefined);
  }
  if (answer.error !== undefined || !answer.response.ok) throw apiErrorOf(answer.error, answer.response);
  return answer.data as T;
}

/** A fresh Idempotency-Key, so a create the browser retries is made once. */
export function idempotencyKey(): string {
  return crypto.randomUUID();
}
