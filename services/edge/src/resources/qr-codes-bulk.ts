import type { Client } from "@connectrpc/connect";
import type { Request, RequestHandler } from "express";
import pLimit from "p-limit";
import type { Logger } from "pino";
import { z } from "zod";
import type { QrCode, WorkspaceService } from "@qrplatform/api/catalog";
import { callerOf, type Caller } from "../http/auth.js";
import { apiErrorOf } from "../http/error-handler.js";
import { answerIsNotFinal, isFinal, requestKeyOf, type RequestKey } from "../http/idempotency.js";
import { jsonBody, parseInput } from "../http/input.js";
import { requestIdOf } from "../http/request-id.js";
import { uuidParam } from "./params.js";

/** The most QR codes one bulk create takes. */
export const MAX_BULK_ITEMS = 100;
/**
 * Items created at once. A few in flight keep the catalog busy without one call taking every
 * connection of the pool (or the embedded platform's one database) from other requests.
 */
const BULK_CONCURRENCY = 4;

// Each item is checked by the single create itself, so its problems are named exactly as there.
const bulkBody = z.strictObject({
  items: z
    .array(z.unknown())
    .min(1, "must hold at least one item")
    .max(MAX_BULK_ITEMS, `must hold at most ${MAX_BULK_ITEMS} items`),
});

/** What the bulk create needs of the single create: one QR code from one create body, at most once per key. */
type CreateOne = (caller: Caller, workspaceId: string, input: unknown, idempotencyKey?: RequestKey) => Promise<QrCode>;

/**
 * The key an item is created under: the call's key, a space (which no Idempotency-Key holds, so no
 * single create's key is the same) and the item's position. A retry of the call sends the same items
 * in the same positions, or it is another request (422 before anything runs).
 */
function itemKey(callKey: RequestKey | undefined, index: number): RequestKey | undefined {
  return callKey && { key: `${callKey.key} ${index}`, fingerprint: callKey.fingerprint };
}

/**
 * `POST /workspaces/{workspace_id}/qr-codes/bulk`: up to 100 QR codes in one call, each created as the
 * single create would create it (the same rules, capacity counted per item) and answered in order,
 * with `201` and the code, or the status and error object the single create would have answered.
 * Under an Idempotency-Key the answer is kept only when every item's outcome is final.
 */
export function bulkCreateHandler(
  workspaces: Client<typeof WorkspaceService>,
  createOne: CreateOne,
  qrCodeJson: (req: Request, qrCode: QrCode) => unknown,
): RequestHandler {
  return async (req, res) => {
    const workspaceId = uuidParam(req, "workspace_id");
    const { items } = parseInput(bulkBody, jsonBody(req));
    const caller = callerOf(res);
    // A workspace that is not there fails the call as a whole, not a hundred times.
    await workspaces.getWorkspace({ accountId: caller.accountId, workspaceId });

    const limit = pLimit(BULK_CONCURRENCY);
    const requestId = requestIdOf(req, res);
    const callKey = requestKeyOf(res);
    const results = await Promise.all(
      items.map((item, index) =>
        limit(async () => {
          try {
            return {
              index,
              status: 201,
              qr_code: qrCodeJson(req, await createOne(caller, workspaceId, item, itemKey(callKey, index))),
            };
          } catch (error) {
            const apiError = apiErrorOf(error);
            if (apiError.status >= 500)
              (req as { log?: Logger }).log?.error({ err: error, requestId, item: index }, "bulk create item failed");
            const { code, message, details } = apiError;
            return {
              index,
              status: apiError.status,
              error: { code, message, ...(details && { details }), request_id: requestId },
            };
          }
        }),
      ),
    );
    const created = results.filter((result) => result.status === 201).length;
    // An item that was still running elsewhere (409) or failed here (5xx) succeeds on a retry: such an
    // answer must not be what the call's key replays for a day.
    if (results.some((result) => !isFinal(result.status))) answerIsNotFinal(res);
    res.status(200).json({ created, failed: results.length - created, results });
  };
}
