import type { Client } from "@connectrpc/connect";
import type { Request, RequestHandler } from "express";
import { z } from "zod";
import type { RenderingService } from "@qrplatform/api/rendering";
import { EXPORT_SIZE, requirePremiumFrames } from "@qrplatform/design";
import { textSchema } from "@qrplatform/platform";
import { callerOf } from "../http/auth.js";
import { jsonBody, parseInput } from "../http/input.js";
import { designBody, designFromBody } from "./design.js";
import { clientGone, FORMATS, type FormatToken, IMAGE_CSP } from "./export.js";

/**
 * The slug of the link a preview encodes by default: as long as a generated one (8 characters of the
 * links service's alphabet), so the symbol has the version, and the grid the modules, of a real code.
 */
const PLACEHOLDER_SLUG = "preview2";

/**
 * The most a preview's own content may hold, in characters. A QR code holds at most 2,953 bytes (version
 * 40 at level L); rendering judges the exact fit at the design's level, this only bounds what it is sent.
 */
const MAX_CONTENT_LENGTH = 4096;

const previewBody = z.strictObject({
  design: designBody.optional(),
  format: z.enum(Object.keys(FORMATS) as [FormatToken, ...FormatToken[]]).default("png"),
  size: z.int().min(EXPORT_SIZE.min).max(EXPORT_SIZE.max).default(EXPORT_SIZE.default),
  content: textSchema().min(1, "must not be empty; leave the field out instead").max(MAX_CONTENT_LENGTH).optional(),
});

/** A preview is drawn for one request and kept by nobody. */
const PREVIEW_CACHE_CONTROL = "no-store";

/**
 * POST /qr-codes/preview: the image of a design that is not stored. The design is judged as a create
 * judges it (rendering's vocabulary, scannability and logo rules with the content it will encode, then
 * the account's premium frames add-on), so a preview is refused exactly when the create would be, with
 * the same error; then it is drawn in the account's render queue, as an export is. Nothing is kept: no
 * code, no link, no capacity, no webhook event. `shortLinkBaseUrl` gives the default short domain whose
 * placeholder link is encoded when the request names no content.
 */
export function previewHandler(
  rendering: Client<typeof RenderingService>,
  shortLinkBaseUrl: (req: Request) => string,
): RequestHandler {
  return async (req, res) => {
    const body = parseInput(previewBody, jsonBody(req));
    const { accountId, account } = callerOf(res);
    const signal = clientGone(res);
    const content = body.content ?? `${shortLinkBaseUrl(req)}/${PLACEHOLDER_SLUG}`;
    const checked = await rendering.validateDesign({ design: designFromBody(body.design), content });
    requirePremiumFrames(checked.premiumFrameFields, account.addons);
    const image = await rendering
      .renderQrCode(
        { content, design: checked.design, format: FORMATS[body.format], size: body.size, accountId },
        { signal },
      )
      .catch((error: unknown) => {
        // The client went away and the render was cancelled for it: nobody is left to answer.
        if (signal.aborted) return undefined;
        throw error;
      });
    if (!image || signal.aborted) return;
    res.setHeader("Cache-Control", PREVIEW_CACHE_CONTROL);
    res.setHeader("Content-Type", image.contentType);
    res.setHeader("Content-Disposition", `inline; filename="preview-${body.size}.${body.format}"`);
    res.setHeader("Content-Security-Policy", IMAGE_CSP);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.end(Buffer.from(image.image.buffer, image.image.byteOffset, image.image.byteLength));
  };
}
