import { randomUUID } from "node:crypto";

let prefixMs = -1;
let prefix = "";

/**
 * A new scan id: a UUID version 7 (RFC 9562), whose first 48 bits are the scan's time in
 * milliseconds and the rest random (74 bits, from `randomUUID`, which draws from a pooled buffer).
 * Ids made one after another sort one after another, so storing them appends to the right-hand edge
 * of links.scan_events' primary key instead of dirtying one random page of it per scan (and, after each
 * checkpoint, writing that whole page to the write-ahead log).
 */
export function timeOrderedScanId(atMs: number): string {
  const ms = Math.max(0, Math.floor(atMs));
  if (ms !== prefixMs) {
    // Scans come many to a millisecond: the time's digits are written once for all of them.
    const time = ms.toString(16).padStart(12, "0");
    prefix = `${time.slice(0, 8)}-${time.slice(8, 12)}-7`;
    prefixMs = ms;
  }
  // randomUUID: xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx; its version digit becomes 7, its variant stays.
  return prefix + randomUUID().slice(15);
}
