import { createHmac, timingSafeEqual } from "node:crypto";

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
