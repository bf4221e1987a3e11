import type { Client } from "@connectrpc/connect";
import type { RequestHandler, Response } from "express";
import { z } from "zod";
import type { QrCodeService } from "@qrplatform/api/catalog";
import { ImageFormat, type RenderingService } from "@qrplatform/api/rendering";
import { EXPORT_SIZE } from "@qrplatform/design";
import { slugify } from "@qrplatform/platform";
import { callerOf } from "../http/auth.js";
import { parseInput } from "../http/input.js";
import type { ExportedImages } from "./exported-images.js";
import { uuidParam } from "./params.js";

/** The formats of the export route, as the public contract names them. */
export const FORMATS = { png: ImageFormat.PNG, jpg: ImageFormat.JPG, svg: ImageFormat.SVG } as const;
export type FormatToken = keyof typeof FORMATS;

/** The `format` and `size` of an export, checked before anything is rendered. */
export const exportQuery = z.object({
  format: z.enum(Object.keys(FORMATS) as [FormatToken, ...FormatToken[]]).default("png"),
  size: z
    .string()
    .regex(/^\d{1,5}$/, "must be an integer")
    .transform(Number)
    .pipe(z.number().int().min(EXPORT_SIZE.min).max(EXPORT_SIZE.max))
    .default(EXPORT_SIZE.default),
});

/**
 * An image never changes for a code (its design and link are fixed at creation), but it belongs to an
 * account: only the caller's own cache may keep it, and it revalidates with the ETag, which costs no
 * rendering when nothing changed.
 */
const IMAGE_CACHE_CONTROL = "private, no-cache";

/**
 * SVG opened on its own is a document: even though ours holds no script, a browser is told to run
 * nothing and fetch nothing from it.
 */
export const IMAGE_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox";

/** Aborted when the client closes the connection before the answer is sent: its render is no longer wanted. */
export function clientGone(res: Response): AbortSignal {
  const gone = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  return gone.signal;
}

/**
 * GET /qr-codes/{id}/export: the code's image, encoding its vanity_url. Query and id are checked
 * before anything is rendered; a matching If-None-Match is answered 304 without rendering. The render
 * is scheduled in the account's turn, and stops if the client goes away. An image the edge answered
 * before (`images`) is answered again without asking rendering; a revalidation is always rendering's
 * to judge.
 */
export function exportHandler(
  qrCodes: Client<typeof QrCodeService>,
  rendering: Client<typeof RenderingService>,
  images: ExportedImages,
): RequestHandler {
  return async (req, res) => {
    const id = uuidParam(req, "id");
    const { format, size } = parseInput(exportQuery, { format: req.query.format, size: req.query.size });
    const { accountId } = callerOf(res);
    const signal = clientGone(res);
    const { qrCode } = await qrCodes.getQrCode({ accountId, qrCodeId: id, skipScanTotals: true });
    const ifNoneMatch = req.get("if-none-match") ?? "";
    const inputs = { content: qrCode!.vanityUrl, design: qrCode!.design, format: FORMATS[format], size };
    const kept = ifNoneMatch === "" ? images.get(inputs) : undefined;
    const image =
      kept ??
      (await rendering.renderQrCode({ ...inputs, ifNoneMatch, accountId }, { signal }).catch((error: unknown) => {
        // The client went away and the render was cancelled for it: nobody is left to answer.
        if (signal.aborted) return undefined;
        throw error;
      }));
    if (image && !kept && !image.notModified) images.keep(inputs, image);
    if (!image || signal.aborted) return;
    res.setHeader("ETag", image.etag);
    res.setHeader("Cache-Control", IMAGE_CACHE_CONTROL);
    res.setHeader("Vary", "Authorization");
    if (image.notModified) {
      res.status(304).end();
      return;
    }
    res.setHeader("Content-Type", image.contentType);
    // A slug is plain ASCII by construction, so the simple quoted form is all any client needs.
    res.setHeader(
      "Content-Disposition",
      `attachment; filename="${slugify(qrCode!.name, "qr-code")}-${size}.${format}"`,
    );
    res.setHeader("Content-Security-Policy", IMAGE_CSP);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.end(Buffer.from(image.image.buffer, image.image.byteOffset, image.image.byteLength));
  };
}
