import { setFlagsFromString } from "node:v8";

/**
 * Stops V8 from allocating any object straight into the old generation because earlier objects from
 * the same line of code lived long (allocation-site pretenuring). Every process of ours calls it before
 * it serves anything, through startProcess.
 *
 * Why (ADR 0014): a server's objects live for one request. When a burst of them
 * outlives a young-generation collection (start-up, a warm-up, a slow moment), V8 decides that a site
 * making a per-request object should allocate it old from then on. Those objects die within the
 * request, but the old generation is only collected by full collections, so until the next one every
 * young object they point to (the rest of the request: its headers, its response, its socket writes)
 * survives each young collection and is copied, then promoted. The process stays that way: measured
 * under `npm start`, a quarter of all it allocated survived each collection, collections took 12–50 ms
 * instead of 1–4, and it answered two thirds as many redirects. The flag is read each time V8 weighs a
 * site, so turning it off at start keeps every process in the good state.
 */
export function turnOffAllocationSitePretenuring(): void {
  setFlagsFromString("--no-allocation-site-pretenuring");
}
