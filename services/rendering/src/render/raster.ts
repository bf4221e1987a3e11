import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { renderAsync } from "@resvg/resvg-js";
import sharp from "sharp";
import { LABEL_FONT_FAMILY } from "./svg.js";

const require = createRequire(import.meta.url);
/** Shipped with the code (an npm package), so a label looks the same on every machine and in every container. */
const LABEL_FONT_FILE = require.resolve("dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf");

/** JPEG quality: high enough that module edges stay sharp for scanners, with 4:4:4 chroma for coloured codes. */
const JPEG_QUALITY = 92;

/**
 * resvg's rendered images keep their pixels outside the V8 heap without telling V8, which therefore
 * sees no reason to collect them: three rounds of twenty 4096 px renders held 1.8 GiB. A full
 * collection after each render of 2048 px or more frees them at once (peak 0.6 GiB in `npm run bench`);
 * below that size the bitmaps are small and the collection would cost more than the render.
 * The V8 flag is set at the first large render, so importing this module changes nothing.
 */
let collectGarbage: ((options: { type: "major" }) => void) | undefined;
const LARGE_BITMAP_PIXELS = 2048 * 2048;

function collectLargeBitmaps(): void {
  if (!collectGarbage) {
    setFlagsFromString("--expose-gc");
    collectGarbage = runInNewContext("gc") as (options: { type: "major" }) => void;
  }
  collectGarbage({ type: "major" });
}

/** Rasterizes our SVG at its own width and height, off the event loop (resvg renders on libuv's thread pool). */
async function rasterize<T>(
  svg: string,
  encode: (image: { pixels: Buffer; width: number; height: number; asPng(): Buffer }) => T,
): Promise<Awaited<T>> {
  let image: Awaited<ReturnType<typeof renderAsync>> | undefined = await renderAsync(svg, {
    font: { loadSystemFonts: false, fontFiles: [LABEL_FONT_FILE], defaultFontFamily: LABEL_FONT_FAMILY },
  });
  const large = image.width * image.height >= LARGE_BITMAP_PIXELS;
  try {
    return await encode(image);
  } finally {
    image = undefined;
    if (large) collectLargeBitmaps();
  }
}

export async function svgToPng(svg: string): Promise<Buffer> {
  return rasterize(svg, (image) => image.asPng());
}

/** Encodes the raw pixels as baseline JPEG, skipping a PNG round trip. Our backgrounds are opaque, so alpha loses nothing. */
export async function svgToJpeg(svg: string): Promise<Buffer> {
  return rasterize(svg, (image) =>
    sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: 4 } })
      .flatten()
      .jpeg({ quality: JPEG_QUALITY, chromaSubsampling: "4:4:4", mozjpeg: false })
      .toBuffer(),
  );
}
