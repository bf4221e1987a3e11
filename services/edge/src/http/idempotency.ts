import { createHash } from "node:crypto";
import type { Request, RequestHandler, Response } from "express";
import type { Logger } from "pino";
import { ApiError } from "./api-error.js";
import { callerOf } from "./auth.js";
import type { IdempotencyStore, StoredResponse } from "./idempotency-store.js";
import { requestIdOf } from "./request-id.js";

/** The request header, as the IETF httpapi draft "The Idempotency-Key HTTP Header Field" names it. */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
/** Set on a response that is a stored one replayed, not the outcome of running the request again. */
export const REPLAYED_HEADER = "Idempotent-Replayed";
/** How long a retry waits by default for the same request still running elsewhere before it answers 409. */
export const DEFAULT_IN_FLIGHT_WAIT_MS = 10_000;

/**
 * A key: 1 to 255 visible ASCII characters other than `"` and `\`. The draft's form is a Structured Field
 * string (`"8e03978e-…"`); the bare form most clients send is the same key.
 */
const KEY = /^[\x21\x23-\x5b\x5d-\x7e]{1,255}$/;
/** Headers of the original response that a replay repeats. */
const REPLAYED_HEADERS = ["content-type", "location"] as const;

/** The key of a request's Idempotency-Key header, or 400 `invalid_idempotency_key`. */
export function parseIdempotencyKey(value: string): string {
  const quoted = value.length >= 2 && value.startsWith('"') && value.endsWith('"');
  const key = quoted ? value.slice(1, -1) : value;
  if (!KEY.test(key)) {
    throw new ApiError(
      400,
      "invalid_idempotency_key",
      'Send one Idempotency-Key header of 1 to 255 visible ASCII characters other than " and \\, bare or in double quotes, such as a UUID.',
      { header: IDEMPOTENCY_KEY_HEADER },
    );
  }
  return key;
}

/** Serialises JSON with object keys sorted, so that the same body written in another key order is the same request. */
function canonicalJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, item: unknown) =>
      item !== null && typeof item === "object" && !Array.isArray(item)
        ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : item,
    ) ?? ""
  );
}

/**
 * What makes two requests the same request: SHA-256 of the method, the path (without the query, which
 * no POST reads) and the parsed JSON body, in any key order and spacing.
 */
export function requestFingerprint(method: string, path: string, body: unknown): Uint8Array {
  return createHash("sha256")
    .update(`${method}\n${path}\n${canonicalJson(body)}`)
    .digest();
}

function fingerprintOf(req: Request): Uint8Array {
  return requestFingerprint(req.method, req.originalUrl.split("?")[0]!, req.body);
}

/**
 * Whether a response is final for its request (stored and replayed) or met a passing state, so that a
 * retry runs again: 5xx (the request failed here, not for what it asked), 408 and 429 (come back
 * later) and 409 (a conflict that may clear, such as `slug_conflict` or `domain_not_verified`). These
 * changed nothing, so the retry cannot do anything twice; the exception is a 503 or 504 whose write went
 * through unseen behind a failed connection or a timeout (ADR 0016).
 */
export function isFinal(status: number): boolean {
  return status < 500 && status !== 408 && status !== 409 && status !== 429;
}

/**
 * Says that the answer the route is about to send is not final although its own status is: a bulk
 * create's 200 holding an item that met a passing state (isFinal). The key is released rather than
 * kept with that answer, so a retry runs the call again; each item has its own key in the catalog, so
 * items already made come back as the same codes and only the others run.
 */
export function answerIsNotFinal(res: Response): void {
  res.locals.idempotencyAnswerNotFinal = true;
}

/** Writes a stored response; an error's request_id becomes this request's, so it matches X-Request-ID as every error does. */
function replay(res: Response, stored: StoredResponse): void {
  let body: Uint8Array | string = stored.body;
  if (stored.status >= 400) {
    const envelope = JSON.parse(Buffer.from(stored.body).toString("utf8")) as { error?: { request_id?: string } };
    if (envelope.error) envelope.error.request_id = requestIdOf(res.req, res);
    body = JSON.stringify(envelope);
  }
  for (const [name, value] of Object.entries(stored.headers)) res.setHeader(name, value);
  res.setHeader(REPLAYED_HEADER, "true");
  res.status(stored.status).send(typeof body === "string" ? body : Buffer.from(body));
}

/** The Idempotency-Key a request runs under, as the route passes it on to a create that records it with what it makes. */
export interface RequestKey {
  key: string;
  /** The request's fingerprint (requestFingerprint). */
  fingerprint: Uint8Array;
}

/**
 * The key the request runs under, when it carries one: a create hands it to the catalog, which records it
 * in the transaction that makes the code, so a retry whose first answer was lost (an edge that died, a
 * timeout whose write went through) returns that code rather than a second one (ADR 0016).
 */
export function requestKeyOf(res: Response): RequestKey | undefined {
  return res.locals.idempotency as RequestKey | undefined;
}

/** Options of idempotentRequests. */
export interface IdempotencyOptions {
  /** How long a retry waits for the same request running elsewhere to finish, before it answers 409. */
  inFlightWaitMs?: number;
}

/**
 * Makes a POST safe to retry when it carries an Idempotency-Key (the IETF httpapi draft): the first
 * request with a key runs once and its response is stored for 24 hours, per account; a retry with the
 * same method, path and body gets that response again, marked `Idempotent-Replayed: true`; the key
 * with a different request is 422 `idempotency_key_reused`; a retry while the first still runs waits
 * for it up to `inFlightWaitMs`, then is 409 `idempotency_key_in_progress` with Retry-After. Responses
 * that are not final (5xx, 408, 409, 429, or a route's answerIsNotFinal) are not stored: the key is
 * released and a retry runs again.
 * Mounted after authentication and the body parser; without the header the request runs as always.
 */
export function idempotentRequests(
  store: IdempotencyStore,
  logger: Logger,
  options: IdempotencyOptions = {},
): RequestHandler {
  const waitMs = options.inFlightWaitMs ?? DEFAULT_IN_FLIGHT_WAIT_MS;
  return async (req, res, next) => {
    const header = req.get(IDEMPOTENCY_KEY_HEADER);
    if (header === undefined) return next();
    const key = parseIdempotencyKey(header);
    const { accountId } = callerOf(res);
    const fingerprint = fingerprintOf(req);

    const deadline = Date.now() + waitMs;
    let outcome = await store.claim(accountId, key, fingerprint);
    for (
      let pause = 25;
      outcome.state === "in_progress" && Date.now() + pause <= deadline;
      pause = Math.min(pause * 2, 500)
    ) {
      await new Promise((resolve) => setTimeout(resolve, pause));
      outcome = await store.claim(accountId, key, fingerprint);
    }

    switch (outcome.state) {
      case "reused":
        throw new ApiError(
          422,
          "idempotency_key_reused",
          "This Idempotency-Key was already used for a different request (another method, path or body); use a new key for a new request.",
          { header: IDEMPOTENCY_KEY_HEADER },
        );
      case "in_progress":
        throw new ApiError(
          409,
          "idempotency_key_in_progress",
          "A request with this Idempotency-Key is still running; retry it with the same key once it has finished.",
          { header: IDEMPOTENCY_KEY_HEADER },
          { "Retry-After": "1" },
        );
      case "completed":
        replay(res, outcome.response);
        return;
      case "claimed":
        res.locals.idempotency = { key, fingerprint } satisfies RequestKey;
        settleWithResponse(res, (response) =>
          isFinal(response.status) && res.locals.idempotencyAnswerNotFinal !== true
            ? store.complete(accountId, key, outcome.claimId, response)
            : store.release(accountId, key, outcome.claimId),
        ).catch((err: unknown) => {
          // The answer still goes out; the key stays held until its lease ends, then a retry runs again.
          logger.warn(
            { err, requestId: requestIdOf(req, res) },
            "could not record the outcome of an idempotent request",
          );
        });
        next();
    }
  };
}

/**
 * Calls `settle` with the response when the route sends it (every API answer, errors included, is
 * JSON), and sends it only after `settle` is done, so that a client holding an answer can always have
 * it replayed. A client that gave up meanwhile changes nothing: the request still runs to its end and
 * its answer is stored for the retry.
 */
function settleWithResponse(res: Response, settle: (response: StoredResponse) => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    const sendJson = res.json.bind(res);
    res.json = ((body: unknown) => {
      const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
      for (const name of REPLAYED_HEADERS) {
        const value = res.get(name);
        if (value !== undefined) headers[name] = value;
      }
      const response = { status: res.statusCode, headers, body: Buffer.from(JSON.stringify(body) ?? "") };
      settle(response)
        .then(resolve, reject)
        .finally(() => sendJson(body));
      return res;
    }) as Response["json"];
  });
}
