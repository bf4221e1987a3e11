// The image work of one render, run on a thread of the render pool (render-pool.ts), never on the
// thread that answers requests: building the SVG, rasterizing it, encoding PNG or JPEG, and the full
// garbage collection that frees a large bitmap all take from tens of milliseconds to seconds.
import { ImageFormat, type Design } from "@qrplatform/api/rendering";
import { encodeQr, type Level } from "./qr-matrix.js";
import { svgToJpeg, svgToPng } from "./raster.js";
import { renderSvg } from "./svg.js";

/** What a pool thread needs to draw one image: the request, already checked and normalized. */
export interface DrawTask {
  readonly content: string;
  readonly design: Design;
  /** PNG, JPG or SVG; never UNSPECIFIED. */
  readonly format: ImageFormat;
  readonly size: number;
}

/** Draws the image; the pool's worker entry (render-worker.ts) runs this. */
export async function draw(task: DrawTask): Promise<Uint8Array> {
  const svg = renderSvg(encodeQr(task.content, task.design.errorCorrection as Level), task.design, task.size);
  if (task.format === ImageFormat.SVG) return Buffer.from(svg);
  return task.format === ImageFormat.JPG ? svgToJpeg(svg) : svgToPng(svg);
}
