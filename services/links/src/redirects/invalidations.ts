import { z } from "zod";
import { memoryChangeBus, redisChangeBus, type ChangeBus, type ChangeEvent, type Logger } from "@qrplatform/platform";

/** Links whose redirect may have changed: by id, or every link on a custom domain's hostname. */
export interface LinkChange {
  linkIds?: string[];
  /** Custom domains (lower-case hostnames) whose links all changed: deleted, verified, or no longer verified. */
  hostnames?: string[];
}

/** What a listener hears: a change, or "everything" when changes may have been missed (after a reconnection). */
export type InvalidationEvent = ChangeEvent<LinkChange>;

/** Tells every redirector instance, in this process and others, that links changed (the platform's change bus). */
export type InvalidationBus = ChangeBus<LinkChange>;

const WHAT = "link changes";

/** One process only: the embedded platform, a single links instance, and tests. */
export function memoryInvalidationBus(logger?: Logger): InvalidationBus {
  return memoryChangeBus<LinkChange>(logger, WHAT);
}

export const INVALIDATION_CHANNEL = "qrp:links:changed";

const MAX_NAMES = 10_000;
const name = z.string().min(1).max(255);
const changeSchema = z.object({
  linkIds: z.array(name).max(MAX_NAMES).optional(),
  hostnames: z.array(name).max(MAX_NAMES).optional(),
});

/** The change a message carries; undefined for anything that is not one. */
function parseChange(message: Record<string, unknown>): LinkChange | undefined {
  const parsed = changeSchema.safeParse(message);
  if (!parsed.success) return undefined;
  const { linkIds, hostnames } = parsed.data;
  return { ...(linkIds && { linkIds }), ...(hostnames && { hostnames }) };
}

/**
 * Redis pub/sub on {@link INVALIDATION_CHANNEL}, so every links instance hears every change; see
 * {@link redisChangeBus} for how it connects, notices a silent Redis, and queues while Redis is away.
 */
export function redisInvalidationBus(redisUrl: string, logger: Logger): Promise<InvalidationBus> {
  return redisChangeBus<LinkChange>(redisUrl, logger, {
    channel: INVALIDATION_CHANNEL,
    parse: parseChange,
    what: WHAT,
    whileUnreachable: "cached redirects are kept for at most a second",
  });
}
