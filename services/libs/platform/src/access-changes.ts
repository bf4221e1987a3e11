import type { Logger } from "pino";
import { z } from "zod";
import { memoryChangeBus, redisChangeBus, type ChangeBus } from "./change-bus.js";

/**
 * Keys and accounts whose authentication may now answer differently: a key revoked, an account's
 * plan, status, add-ons or hourly limit changed. Tenancy announces them; every edge drops what it
 * cached of them.
 */
export interface AccessChange {
  apiKeyIds?: string[];
  accountIds?: string[];
}

/** Tenancy's announcements of key and account changes to the edges. */
export type AccessChangeBus = ChangeBus<AccessChange>;

export const ACCESS_CHANGES_CHANNEL = "qrp:tenancy:access-changed";

const WHAT = "key and account changes";
const ids = z.array(z.string().min(1).max(64)).max(10_000).optional();
const changeSchema = z.object({ apiKeyIds: ids, accountIds: ids });

/** One process only: the embedded platform, where tenancy and the edge share it, and tests. */
export function memoryAccessChanges(logger?: Logger): AccessChangeBus {
  return memoryChangeBus<AccessChange>(logger, WHAT);
}

/** Redis pub/sub on {@link ACCESS_CHANGES_CHANNEL}: every tenancy instance announces, every edge hears. */
export function redisAccessChanges(redisUrl: string, logger: Logger): Promise<AccessChangeBus> {
  return redisChangeBus<AccessChange>(redisUrl, logger, {
    channel: ACCESS_CHANGES_CHANNEL,
    parse(message) {
      const parsed = changeSchema.safeParse(message);
      if (!parsed.success) return undefined;
      const { apiKeyIds, accountIds } = parsed.data;
      return { ...(apiKeyIds && { apiKeyIds }), ...(accountIds && { accountIds }) };
    },
    what: WHAT,
    whileUnreachable: "edges re-authenticate a key cached for more than a second",
  });
}
