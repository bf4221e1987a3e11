import { once } from "node:events";
import type { Client } from "@connectrpc/connect";
import type { RequestHandler, Response } from "express";
import type { Logger } from "pino";
import { Readable } from "node:stream";
import { ZipFile } from "yazl";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { QrCode, QrCodeService, WorkspaceService } from "@qrplatform/api/catalog";
import { ImageFormat, type RenderingService } from "@qrplatform/api/rendering";
import { slugify } from "@qrplatform/platform";
import { ApiError } from "../http/api-error.js";
import { callerOf } from "../http/auth.js";
import { parseInput } from "../http/input.js";
import { requestIdOf } from "../http/request-id.js";
import { clientGone, exportQuery, FORMATS, type FormatToken } from "./export.js";
import { uuidParam } from "./params.js";

/** Codes listed per call to the catalog while the archive is written: few, as a design may hold a logo of 256 KiB. */
const PAGE_SIZE = 20;
/**
 * Images rendered ahead of the one being written: the account's own render concurrency (2), so the
 * renderer stays busy while the archive is sent, and memory holds at most this many images.
 */
const RENDER_AHEAD = 2;
/** Bytes the archive may have waiting for the client (in the zip stream and the socket) before the next image is added. */
const UNSENT_BYTES_LIMIT = 1024 * 1024;
/** Listing codes is what `qr_codes:read` guards: the archive names every code of the workspace. */
const LIST_SCOPE = "qr_codes:read";

/**
 * File names inside the archive: the code's name as a slug (its id when nothing is left of the name),
 * then `-2`, `-3`, … for a name already used, so every entry has its own file. Only the names are kept,
 * a few dozen bytes a code.
 */
function entryNames(extension: string): (code: QrCode) => string {
  const used = new Set<string>();
  return (code) => {
    const base = slugify(code.name, code.id);
    let name = `${base}.${extension}`;
    for (let n = 2; used.has(name); n++) name = `${base}-${n}.${extension}`;
    used.add(name);
    return name;
  };
}

/** Every code of the workspace, oldest first, a page at a time, as the catalog lists them. */
async function* workspaceCodes(
  qrCodes: Client<typeof QrCodeService>,
  accountId: string,
  workspaceId: string,
  first: { qrCodes: QrCode[]; nextPageToken: string },
  signal: AbortSignal,
): AsyncGenerator<QrCode> {
  let page = first;
  for (;;) {
    yield* page.qrCodes;
    if (!page.nextPageToken) return;
    page = await qrCodes.listQrCodes(
      { accountId, workspaceId, pageSize: PAGE_SIZE, pageToken: page.nextPageToken },
      { signal },
    );
  }
}

/** Resolves once the client has taken enough of what was written, or has gone. */
async function roomToWrite(res: Response, zip: Readable, signal: AbortSignal): Promise<void> {
  while (
    !signal.aborted &&
    !zip.destroyed &&
    !res.destroyed &&
    zip.readableLength + res.writableLength > UNSENT_BYTES_LIMIT
  ) {
    // Either the socket is full, and drains as the client reads, or the pipe has just resumed after a
    // drain and hands the archive's waiting bytes over, one "data" event at a time.
    const progress = res.writableNeedDrain ? once(res, "drain", { signal }) : once(zip, "data", { signal });
    await progress.catch(() => undefined);
  }
}

/**
 * GET /workspaces/{workspace_id}/qr-codes/export: every QR code of the workspace as one ZIP of images in
 * one format and size, streamed. What can fail before the first byte (the query, the scopes, the
 * workspace, the first page of codes, the first image, which a full render queue refuses with 429) is
 * answered with the JSON error envelope. The codes are then
 * listed a page at a time and each is rendered through the rendering service (its cache and the
 * account's turn, as a single export), a couple ahead, and added only when the client has taken what
 * came before, so memory stays flat whatever the number of codes. A failure after the first byte
 * destroys the response: the client sees a broken transfer and an unreadable archive, never one that
 * is silently short. A client that goes away stops the work.
 */
export function workspaceExportHandler(
  workspaces: Client<typeof WorkspaceService>,
  qrCodes: Client<typeof QrCodeService>,
  rendering: Client<typeof RenderingService>,
): RequestHandler {
  return async (req, res) => {
    const workspaceId = uuidParam(req, "workspace_id");
    const { format, size } = parseInput(exportQuery, { format: req.query.format, size: req.query.size });
    const caller = callerOf(res);
    if (!caller.scopes.has(LIST_SCOPE)) {
      throw new ApiError(403, "insufficient_scope", `This API key lacks the "${LIST_SCOPE}" scope.`, {
        required_scope: LIST_SCOPE,
      });
    }
    const { accountId } = caller;
    const signal = clientGone(res);
    const { workspace } = await workspaces.getWorkspace({ accountId, workspaceId }, { signal });
    const firstPage = await qrCodes.listQrCodes({ accountId, workspaceId, pageSize: PAGE_SIZE }, { signal });

    const zip = new ZipFile();
    const output = zip.outputStream as Readable;
    res.status(200);
    res.setHeader("Content-Type", "application/zip");
    res.setHeader(
      "Content-Disposition",
      `attachment; filename="${slugify(workspace!.name, "workspace")}-${format}-${size}.zip"`,
    );
    res.setHeader("X-Content-Type-Options", "nosniff");
    output.pipe(res);
    try {
      await writeEntries(zip, output, res, signal, {
        codes: workspaceCodes(qrCodes, accountId, workspaceId, firstPage, signal),
        render: (code, admitted) =>
          renderImage(rendering, { accountId, code, format, size, waitForTurn: admitted }, signal),
        nameOf: entryNames(format),
        // PNG and JPEG are compressed already; deflating them again costs time for nothing.
        compress: format === "svg",
      });
      if (signal.aborted) return;
      zip.end();
      await once(res, "finish", { signal }).catch(() => undefined);
    } catch (error) {
      if (signal.aborted) return;
      output.unpipe(res);
      if (!res.headersSent) {
        // Nothing was sent yet (the first image failed): the client gets the error envelope after all.
        for (const header of ["Content-Type", "Content-Disposition"]) res.removeHeader(header);
        throw error;
      }
      (req as { log?: Logger }).log?.error(
        { err: error, requestId: requestIdOf(req, res), workspaceId },
        "workspace export failed after its first byte; the response was cut",
      );
      res.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  };
}

async function renderImage(
  rendering: Client<typeof RenderingService>,
  {
    accountId,
    code,
    format,
    size,
    waitForTurn,
  }: { accountId: string; code: QrCode; format: FormatToken; size: number; waitForTurn: boolean },
  signal: AbortSignal,
): Promise<Buffer> {
  const { image } = await rendering.renderQrCode(
    {
      content: code.vanityUrl,
      design: code.design,
      format: FORMATS[format] ?? ImageFormat.PNG,
      size,
      accountId,
      waitForTurn,
    },
    { signal },
  );
  return Buffer.from(image.buffer, image.byteOffset, image.byteLength);
}

/**
 * Adds one file and resolves once the archive has read it, which the client's pace decides. yazl keeps
 * every entry, and the function that opens its data, until the archive ends (for its central
 * directory): the image is therefore handed over in a holder that the opening empties, and no closure
 * here sees the image itself, or the archive would end up held whole in memory.
 */
function addEntry(
  zip: ZipFile,
  name: string,
  image: { bytes?: Buffer },
  options: { compress: boolean; mtime: Date },
): Promise<void> {
  const size = image.bytes!.length;
  return new Promise((resolve, reject) => {
    zip.addReadStreamLazy(name, { ...options, size }, (open) => {
      const stream = Readable.from([image.bytes!]);
      image.bytes = undefined;
      stream.once("end", () => resolve()).once("error", reject);
      open(null, stream);
    });
  });
}

/**
 * Adds the codes' images in order, rendering at most RENDER_AHEAD ahead, each once the client has room
 * for it. The first image is the archive's admission: it is asked for alone and may be refused
 * (`render_queue_full`) while nothing is sent; the archive is admitted once it is drawn, and every
 * later image waits for the account's turn rather than be refused part way through the archive.
 */
async function writeEntries(
  zip: ZipFile,
  output: Readable,
  res: Response,
  signal: AbortSignal,
  entries: {
    codes: AsyncGenerator<QrCode>;
    render: (code: QrCode, admitted: boolean) => Promise<Buffer>;
    nameOf: (code: QrCode) => string;
    compress: boolean;
  },
): Promise<void> {
  const ahead: { code: QrCode; image: Promise<Buffer> }[] = [];
  const writeOldest = async () => {
    const { code, image } = ahead.shift()!;
    const holder = { bytes: await image };
    await roomToWrite(res, output, signal);
    if (signal.aborted) return;
    await addEntry(zip, entries.nameOf(code), holder, {
      compress: entries.compress,
      mtime: code.updateTime ? timestampDate(code.updateTime) : new Date(),
    });
  };
  let admitted = false;
  for await (const code of entries.codes) {
    if (signal.aborted) return;
    const image = entries.render(code, admitted);
    if (!admitted) {
      await image;
      admitted = true;
    }
    // Its failure is met when its turn to be written comes; until then it must not count as unhandled.
    image.catch(() => undefined);
    ahead.push({ code, image });
    if (ahead.length > RENDER_AHEAD) await writeOldest();
  }
  while (ahead.length > 0 && !signal.aborted) await writeOldest();
}
