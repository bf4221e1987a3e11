import { createHmac, timingSafeEqual } from "node:crypto";
import { invalidArgument } from "./errors.js";

/** The position after the last item of a page in (create_time, id) order, plus what the list was scoped to. */
export interface PagePosition {
  /** The account the list belongs to; a token is refused in any other account. */
  accountId: string;
  /** What else the list was filtered by, such as a workspace id; a token is refused under another filter. */
  scope: string;
  /** The create time of the last item, as an ISO string. */
  after: string;
  /** The id of the last item, to break ties in create time. */
  afterId: string;
}

/**
 * Opaque, tamper-proof page tokens: the position is signed with HMAC-SHA256 so a client can neither
 * forge a position nor replay a token against another account or filter.
 */
export class PageTokens {
  readonly #secret: string;

  constructor(secret: string) {
    this.#secret = secret;
  }

  /** Encodes a position as an opaque URL-safe token. */
  encode(position: PagePosition): string {
    const payload = Buffer.from(JSON.stringify([position.accountId, position.scope, position.after, position.afterId]));
    return `${payload.toString("base64url")}.${this.#sign(payload).toString("base64url")}`;
  }

  /** Decodes a token issued for this account and scope; undefined when it is malformed, forged or foreign. */
  decode(token: string, accountId: string, scope: string): PagePosition | undefined {
    const [payloadPart, signaturePart, ...rest] = token.split(".");
    if (!payloadPart || !signaturePart || rest.length > 0) return undefined;
    const payload = Buffer.from(payloadPart, "base64url");
    const signature = Buffer.from(signaturePart, "base64url");
    // Base64 decoding ignores the unused low bits of the last character, so two spellings can decode
    // to the same bytes; only the spelling this class wrote is accepted.
    if (payload.toString("base64url") !== payloadPart || signature.toString("base64url") !== signaturePart) {
      return undefined;
    }
    const expected = this.#sign(payload);
    if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) return undefined;
    let fields: unknown;
    try {
      fields = JSON.parse(payload.toString("utf8"));
    } catch {
      return undefined;
    }
    if (!Array.isArray(fields) || fields.length !== 4 || !fields.every((f) => typeof f === "string")) return undefined;
    const [tokenAccount, tokenScope, after, afterId] = fields as [string, string, string, string];
    if (tokenAccount !== accountId || tokenScope !== scope) return undefined;
    return { accountId, scope, after, afterId };
  }

  #sign(payload: Buffer): Buffer {
    return createHmac("sha256", this.#secret).update(payload).digest();
  }
}

/** Page sizes: what a list returns when the caller does not say, and the most it ever returns. */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** Where a page starts: after the row with this (created_at, id). */
export interface Keyset {
  createdAt: Date;
  id: string;
}

/**
 * Reads the page_size and page_token of a list request scoped to an account and filter. Asks the
 * repository for one row more than the page, so {@link pageOf} can tell whether another page follows.
 */
export function readPageRequest(
  tokens: PageTokens,
  req: { pageSize: number; pageToken: string },
  accountId: string,
  scope: string,
): { limit: number; fetch: number; after: Keyset | undefined } {
  if (req.pageSize < 0 || req.pageSize > MAX_PAGE_SIZE) {
    throw invalidArgument([
      { field: "page_size", reason: "out_of_range", description: `must be 1 to ${MAX_PAGE_SIZE}` },
    ]);
  }
  const limit = req.pageSize || DEFAULT_PAGE_SIZE;
  if (!req.pageToken) return { limit, fetch: limit + 1, after: undefined };
  const position = tokens.decode(req.pageToken, accountId, scope);
  if (!position) {
    throw invalidArgument([
      { field: "page_token", reason: "invalid_page_token", description: "is not a token this list issued" },
    ]);
  }
  return { limit, fetch: limit + 1, after: { createdAt: new Date(position.after), id: position.afterId } };
}

/** Cuts the fetched rows to the page and issues the token for the next page, or "" on the last page. */
export function pageOf<Row extends { created_at: Date; id: string }>(
  tokens: PageTokens,
  rows: Row[],
  limit: number,
  accountId: string,
  scope: string,
): { items: Row[]; nextPageToken: string } {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const nextPageToken =
    rows.length > limit && last
      ? tokens.encode({ accountId, scope, after: last.created_at.toISOString(), afterId: last.id })
      : "";
  return { items, nextPageToken };
}
