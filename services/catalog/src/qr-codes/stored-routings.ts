import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { LinkRoutingSchema, type LinkRouting } from "@qrplatform/api/links";
import { LRUCache } from "lru-cache";

/**
 * The stored routing of codes as protos. Reads select catalog.qr_codes.routing as its text (see
 * qr-codes.repository.ts), and a code's text is parsed once and its proto reused while the text stays
 * the same: a list page of codes with 20 rules each would otherwise parse and convert some 40 kB of JSON
 * per request, several times the cost of the rest of the page. Keyed by the code and checked against the
 * whole text, so a change made by any catalog process is seen on the next read.
 */
export interface StoredRoutings {
  /**
   * The routing of the code from its column as read: text from a read, the parsed JSON from a write's
   * `returning`, or null for none. The proto is shared between reads and must not be changed.
   */
  of(codeId: string, column: unknown): LinkRouting;
}

/** How many characters of stored routing text are kept with their protos (about 4 MB of text by default). */
export function storedRoutings(maxTextLength = 4_000_000): StoredRoutings {
  const parsed = new LRUCache<string, { text: string; routing: LinkRouting }>({
    maxSize: maxTextLength,
    sizeCalculation: (entry) => Math.max(1, entry.text.length),
  });
  return {
    of(codeId, column) {
      if (column === null || column === undefined) return create(LinkRoutingSchema);
      if (typeof column !== "string") return fromJson(LinkRoutingSchema, column as JsonValue);
      const kept = parsed.get(codeId);
      if (kept?.text === column) return kept.routing;
      const routing = fromJson(LinkRoutingSchema, JSON.parse(column) as JsonValue);
      parsed.set(codeId, { text: column, routing });
      return routing;
    },
  };
}
