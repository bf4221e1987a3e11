// An in-memory TXT lookup for the links service, answering from a table the test edits, as the real
// DNS server in ./dns-server.ts does: tests of domain verification that are not about DNS itself need
// no UDP server.
import type { LookupTxt } from "@qrplatform/links";

/** The links service's `lookupTxt` and the table it answers from. */
export interface MemoryTxtLookup {
  readonly lookupTxt: LookupTxt;
  /**
   * Records by lower-case name: a name with records answers them, a name listed in `existing` answers
   * that it has none, any other name that it does not exist, and "silent" times out.
   */
  readonly txt: Map<string, string[][] | "silent">;
  /** Names that exist but have no TXT record. */
  readonly existing: Set<string>;
  /** Publishes a TXT record with one value (or several strings forming one value). */
  setTxt(name: string, ...values: string[]): void;
}

export function memoryTxtLookup(): MemoryTxtLookup {
  const txt = new Map<string, string[][] | "silent">();
  const existing = new Set<string>();
  return {
    txt,
    existing,
    async lookupTxt(name) {
      const key = name.toLowerCase();
      const entry = txt.get(key);
      if (entry === "silent") return { kind: "timeout" };
      // A TXT record split into several strings is one value, as dnsTxtLookup joins it.
      if (entry) return { kind: "records", values: entry.map((chunks) => chunks.join("")) };
      return existing.has(key) ? { kind: "no_records" } : { kind: "no_domain" };
    },
    setTxt(name, ...values) {
      txt.set(
        name.toLowerCase(),
        values.map((v) => [v]),
      );
    },
  };
}
