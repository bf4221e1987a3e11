// The steps that bring a QR code and its short link back into agreement. The handlers use them when
// a call to the links service fails; the reconciler uses them for operations a crash left pending.
import { Code, ConnectError } from "@connectrpc/connect";
import { QrCodeStatus } from "@qrplatform/api/catalog";
import { LinkStatus } from "@qrplatform/api/links";
import type { CatalogDeps } from "../deps.js";
import { routingColumn, statusToken } from "./qr-code-mapping.js";
import * as qrCodes from "./qr-codes.repository.js";

/** The links-service calls a repair may make, each bounded so a repair never hangs a reconciler. */
export const LINK_CALL_TIMEOUT_MS = 10_000;

/**
 * Whether the links service answered with a decision (it refused, or the thing does not exist), as
 * opposed to a failure whose outcome is unknown: a timeout, a dropped connection, an internal error.
 */
export function isDecided(error: unknown): boolean {
  const code = ConnectError.from(error).code;
  return [
    Code.InvalidArgument,
    Code.NotFound,
    Code.AlreadyExists,
    Code.PermissionDenied,
    Code.FailedPrecondition,
    Code.OutOfRange,
    Code.ResourceExhausted,
    Code.Unauthenticated,
  ].includes(code);
}

const isNotFound = (error: unknown) => ConnectError.from(error).code === Code.NotFound;

/**
 * Undoes a create: purges its link, if it was made, then frees the place it held. Purged, not just
 * deleted: the code never existed for anyone, so its slugs must not stay taken. When the link turns
 * out not to exist but the create's own call to the links service ended without an answer, that call
 * may still be running there: the place is kept (returns false) for the reconciler, which repeats
 * this after the grace period, when nothing can be in flight any more.
 */
export async function undoCreate(
  deps: CatalogDeps,
  code: { account_id: string; id: string; link_id: string | null },
  outcomeKnown: boolean,
): Promise<boolean> {
  if (code.link_id) {
    try {
      await deps.links.deleteLink(
        { accountId: code.account_id, linkId: code.link_id, purge: true },
        { timeoutMs: LINK_CALL_TIMEOUT_MS },
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
      if (!outcomeKnown) return false;
    }
  }
  await qrCodes.discardReservation(deps.db, code.account_id, code.id);
  return true;
}

/** Finishes a delete: the link goes first (its slugs stay reserved for good), then the code. */
export async function finishDelete(
  deps: CatalogDeps,
  code: { account_id: string; id: string; link_id: string | null },
): Promise<boolean> {
  if (code.link_id) {
    await deps.links
      .deleteLink({ accountId: code.account_id, linkId: code.link_id }, { timeoutMs: LINK_CALL_TIMEOUT_MS })
      .catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
  }
  return qrCodes.remove(deps.db, code.account_id, code.id);
}

/**
 * Settles an update whose outcome at the links service is unknown: the link is what redirects, so the
 * code takes the link's destination, status and routing. A code whose link is gone is deleted with it.
 */
export async function syncFromLink(
  deps: CatalogDeps,
  code: { account_id: string; id: string; link_id: string | null },
  token: Date,
): Promise<"synced" | "deleted"> {
  const link = code.link_id
    ? await deps.links
        .getLink({ accountId: code.account_id, linkId: code.link_id }, { timeoutMs: LINK_CALL_TIMEOUT_MS })
        .then((res) => res.link)
        .catch((error: unknown) => {
          if (isNotFound(error)) return undefined;
          throw error;
        })
    : undefined;
  if (!link) {
    await finishDelete(deps, code);
    return "deleted";
  }
  const status = link.status === LinkStatus.PAUSED ? QrCodeStatus.PAUSED : QrCodeStatus.ACTIVE;
  await qrCodes.update(
    deps.db,
    code.account_id,
    code.id,
    { destination_url: link.destinationUrl, status: statusToken(status), routing: routingColumn(link.routing) },
    token,
  );
  return "synced";
}
