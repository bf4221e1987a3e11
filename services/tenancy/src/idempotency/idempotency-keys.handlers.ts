import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  ClaimIdempotencyKeyResponseSchema,
  CompleteIdempotencyKeyResponseSchema,
  IdempotencyKeyState,
  ReleaseIdempotencyKeyResponseSchema,
  StoredResponseSchema,
  type ClaimIdempotencyKeyRequest,
  type ClaimIdempotencyKeyResponse,
  type CompleteIdempotencyKeyRequest,
  type CompleteIdempotencyKeyResponse,
  type ReleaseIdempotencyKeyRequest,
  type ReleaseIdempotencyKeyResponse,
} from "@qrplatform/api/tenancy";
import { Code, invalidArgument, isUuid, notFound, serviceError, type FieldProblem } from "@qrplatform/platform";
import type { TenancyDeps } from "../deps.js";
import * as idempotencyKeys from "./idempotency-keys.repository.js";
import type { IdempotencyKeyRow } from "./idempotency-keys.table.js";

/** How long a key is kept, from the first request that used it. */
export const IDEMPOTENCY_KEY_RETENTION_MS = 24 * 3600 * 1000;
/**
 * How long a running request holds its key. Far longer than any API request may run (the edge gives a
 * backend call 10 s), so only a request whose edge died loses its key to a retry, and then after a minute.
 */
export const IDEMPOTENCY_KEY_LEASE_MS = 60 * 1000;
/** Expired keys are swept at most this often per process, at most SWEEP_BATCH at a time. */
const SWEEP_INTERVAL_MS = 60 * 1000;
const SWEEP_BATCH = 1000;

const KEY = /^[\x21-\x7e]{1,255}$/;
const FINGERPRINT_BYTES = 32;

function keyProblems(req: { accountId: string; key: string; claimId?: string }): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!isUuid(req.accountId))
    problems.push({ field: "account_id", reason: "invalid_format", description: "must be a UUID" });
  if (!KEY.test(req.key))
    problems.push({ field: "key", reason: "invalid_format", description: "must be 1 to 255 visible ASCII characters" });
  if (req.claimId !== undefined && !isUuid(req.claimId))
    problems.push({ field: "claim_id", reason: "invalid_format", description: "must be a UUID" });
  return problems;
}

/** Sweeps expired keys now and then, on the back of claims, so no process needs a timer for it. */
export function expiredKeySweeper(deps: TenancyDeps): { maybeSweep(): void } {
  let lastSweep = 0;
  return {
    maybeSweep() {
      const now = deps.now();
      if (now.getTime() - lastSweep < SWEEP_INTERVAL_MS) return;
      lastSweep = now.getTime();
      // Off the request path: a failed sweep costs nothing but a later one, and expired rows are ignored meanwhile.
      void idempotencyKeys.deleteExpired(deps.db, now, SWEEP_BATCH).catch(() => {});
    },
  };
}

function storedResponseOf(row: IdempotencyKeyRow) {
  return create(StoredResponseSchema, {
    statusCode: row.response_status!,
    headers: row.response_headers ?? {},
    body: new Uint8Array(row.response_body!),
  });
}

/** What a claim that did not win found: the stored response, a request still running, or another request. */
function stateOf(row: IdempotencyKeyRow, fingerprint: Uint8Array): ClaimIdempotencyKeyResponse {
  if (!Buffer.from(row.fingerprint).equals(Buffer.from(fingerprint))) {
    return create(ClaimIdempotencyKeyResponseSchema, { state: IdempotencyKeyState.REUSED });
  }
  if (row.response_status !== null) {
    return create(ClaimIdempotencyKeyResponseSchema, {
      state: IdempotencyKeyState.COMPLETED,
      response: storedResponseOf(row),
    });
  }
  return create(ClaimIdempotencyKeyResponseSchema, {
    state: IdempotencyKeyState.IN_PROGRESS,
    leaseExpireTime: timestampFromDate(row.lease_expires_at),
  });
}

export async function claimIdempotencyKey(
  deps: TenancyDeps,
  sweeper: { maybeSweep(): void },
  req: ClaimIdempotencyKeyRequest,
): Promise<ClaimIdempotencyKeyResponse> {
  const problems = keyProblems(req);
  if (req.fingerprint.length !== FINGERPRINT_BYTES) {
    problems.push({
      field: "fingerprint",
      reason: "invalid_length",
      description: `must be ${FINGERPRINT_BYTES} bytes (a SHA-256)`,
    });
  }
  if (problems.length > 0) throw invalidArgument(problems);
  sweeper.maybeSweep();

  // A release can delete the row between the insert that lost and the read: then the key is free, try again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = deps.now();
    const claimId = randomUUID();
    let row: IdempotencyKeyRow | undefined;
    try {
      row = await idempotencyKeys.claim(
        deps.db,
        {
          account_id: req.accountId,
          key: req.key,
          fingerprint: req.fingerprint,
          claim_id: claimId,
          lease_expires_at: new Date(now.getTime() + IDEMPOTENCY_KEY_LEASE_MS),
          response_status: null,
          response_headers: null,
          response_body: null,
          created_at: now,
          expires_at: new Date(now.getTime() + IDEMPOTENCY_KEY_RETENTION_MS),
        },
        now,
      );
    } catch (error) {
      if ((error as { code?: string }).code === "23503") throw notFound("account");
      throw error;
    }
    if (!row) continue;
    if (row.claim_id === claimId)
      return create(ClaimIdempotencyKeyResponseSchema, { state: IdempotencyKeyState.CLAIMED, claimId });
    return stateOf(row, req.fingerprint);
  }
  // The key changed hands under every attempt: other requests are busy with it, which is what IN_PROGRESS says.
  return create(ClaimIdempotencyKeyResponseSchema, {
    state: IdempotencyKeyState.IN_PROGRESS,
    leaseExpireTime: timestampFromDate(deps.now()),
  });
}

export async function completeIdempotencyKey(
  deps: TenancyDeps,
  req: CompleteIdempotencyKeyRequest,
): Promise<CompleteIdempotencyKeyResponse> {
  const problems = keyProblems(req);
  const status = req.response?.statusCode ?? 0;
  if (status < 100 || status > 599)
    problems.push({
      field: "response.status_code",
      reason: "out_of_range",
      description: "must be an HTTP status, 100 to 599",
    });
  if (problems.length > 0) throw invalidArgument(problems);
  const stored = await idempotencyKeys.complete(deps.db, req.accountId, req.key, req.claimId, {
    status,
    headers: req.response!.headers,
    body: req.response!.body,
  });
  if (!stored) {
    throw serviceError(
      Code.FailedPrecondition,
      "idempotency_claim_lost",
      "This claim no longer holds the idempotency key.",
    );
  }
  return create(CompleteIdempotencyKeyResponseSchema, {});
}

export async function releaseIdempotencyKey(
  deps: TenancyDeps,
  req: ReleaseIdempotencyKeyRequest,
): Promise<ReleaseIdempotencyKeyResponse> {
  const problems = keyProblems(req);
  if (problems.length > 0) throw invalidArgument(problems);
  await idempotencyKeys.release(deps.db, req.accountId, req.key, req.claimId);
  return create(ReleaseIdempotencyKeyResponseSchema, {});
}
