import { createRequire } from "node:module";
import { renderAsync } from "@resvg/resvg-js";
import sharp from "sharp";
import { LABEL_FONT_FAMILY } from "./svg.js";

const require = createRequire(import.meta.url);
/** Shipped with the code (an npm package), so a label looks the same on every machine and in every container. */
const LABEL_FONT_FILE = require.resolve("dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf");

/** JPEG quality: high enough that module edges stay sharp for scanners, with 4:4:4 chroma for coloured codes. */
const JPEG_QUALITY = 92;

/** Rasterizes our SVG at its own width and height, off the event loop (resvg renders on libuv's thread pool). */
export async function svgToPng(svg: string): Promise<Buffer> {
  const rendered = await renderAsync(svg, {
    font: { loadSystemFonts: false, fontFiles: [LABEL_FONT_FILE], defaultFontFamily: LABEL_FONT_FAMILY },
  });
  return rendered.asPng();
}

/** Encodes a PNG as baseline JPEG. Our images always have an opaque background, so nothing is lost to alpha. */
export async function pngToJpeg(png: Buffer): Promise<Buffer> {
  return sharp(png).flatten().jpeg({ quality: JPEG_QUALITY, chromaSubsampling: "4:4:4", mozjpeg: false }).toBuffer();
}
