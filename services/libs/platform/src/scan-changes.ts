import type { Logger } from "pino";
import { z } from "zod";
import { memoryChangeBus, redisChangeBus, type ChangeBus } from "./change-bus.js";

/**
 * Links whose all-time scan totals grew: the links service announces the links of every batch of
 * scans it stores, before it answers the batch; every catalog drops the totals it kept of them.
 */
export interface ScanChange {
  linkIds: string[];
}

/** The links service's announcements of stored scans to the catalogs' caches of scan totals. */
export type ScanChangeBus = ChangeBus<ScanChange>;

/** Its own channel: the redirectors' bus (`qrp:links:changed`) would hear every batch of scans. */
export const SCAN_CHANGES_CHANNEL = "qrp:links:scans-stored";

const WHAT = "stored scans";
const changeSchema = z.object({ linkIds: z.array(z.string().min(1).max(64)).max(10_000) });

/** One process only: the embedded platform, where links and the catalog share it, and tests. */
export function memoryScanChanges(logger?: Logger): ScanChangeBus {
  return memoryChangeBus<ScanChange>(logger, WHAT);
}

/** Redis pub/sub on {@link SCAN_CHANGES_CHANNEL}: every links instance announces, every catalog hears. */
export function redisScanChanges(redisUrl: string, logger: Logger): Promise<ScanChangeBus> {
  return redisChangeBus<ScanChange>(redisUrl, logger, {
    channel: SCAN_CHANGES_CHANNEL,
    parse(message) {
      const parsed = changeSchema.safeParse(message);
      return parsed.success ? { linkIds: parsed.data.linkIds } : undefined;
    },
    what: WHAT,
    whileUnreachable: "catalogs ask for scan totals kept for more than a second",
  });
}
