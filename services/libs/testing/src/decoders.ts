// Independent QR decoders for the tests: zbarimg (Debian zbar-tools) reads PNG and JPEG files, rsvg-convert
// (Debian librsvg2-bin) rasterizes SVG with another engine than ours, and jsQR decodes in-process. CI
// installs both tools; a missing tool fails the tests that need it rather than skipping them.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { XMLParser } from "fast-xml-parser";
import jsQRModule from "jsqr";
import sharp from "sharp";

const run = promisify(execFile);
// jsqr is CommonJS with `exports.default`; under Node's ESM interop the default import is the module.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ??
  jsQRModule) as unknown as typeof jsQRModule.default;

/** Decodes every image with one zbarimg run; the answer is each image's decoded text, or null when zbar found no code. */
export async function zbarDecode(images: readonly Buffer[], extension: "png" | "jpg"): Promise<(string | null)[]> {
  const dir = await mkdtemp(join(tmpdir(), "qrp-zbar-"));
  try {
    const files = await Promise.all(
      images.map(async (image, i) => {
        const file = join(dir, `${i}.${extension}`);
        await writeFile(file, image);
        return file;
      }),
    );
    // zbarimg exits 4 when some image had no code; its XML still lists every source.
    const { stdout } = await run("zbarimg", ["-q", "--xml", ...files], { maxBuffer: 64 * 1024 * 1024 }).catch(
      (error: { code?: number; stdout?: string }) => {
        if (error.code === 4 && error.stdout) return { stdout: error.stdout };
        throw error;
      },
    );
    const parsed = new XMLParser({
      ignoreAttributes: false,
      isArray: (name) => ["source", "symbol", "index"].includes(name),
    }).parse(stdout);
    const decoded = new Map<string, string>();
    for (const source of parsed.barcodes?.source ?? []) {
      const symbol = source.index?.[0]?.symbol?.[0];
      if (symbol) decoded.set(source["@_href"], String(symbol.data));
    }
    return files.map((file) => decoded.get(file) ?? null);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Rasterizes an SVG with librsvg at its own width. */
export async function rsvgToPng(svg: string | Buffer): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), "qrp-rsvg-"));
  try {
    const input = join(dir, "in.svg");
    const output = join(dir, "out.png");
    await writeFile(input, svg);
    await run("rsvg-convert", ["--format", "png", "--output", output, input]);
    return await sharp(output).png().toBuffer();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Decodes a PNG or JPEG with jsQR, or answers null. */
export async function jsqrDecode(image: Buffer): Promise<string | null> {
  const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return (
    jsQR(new Uint8ClampedArray(data.buffer, data.byteOffset, data.byteLength), info.width, info.height)?.data ?? null
  );
}

/** The text and the symbol version (which fixes the grid of modules) that jsQR reads in an image; null when it finds no code. */
export async function jsqrSymbol(image: Buffer): Promise<{ text: string; version: number } | null> {
  const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const found = jsQR(new Uint8ClampedArray(data.buffer, data.byteOffset, data.byteLength), info.width, info.height);
  return found ? { text: found.data, version: found.version } : null;
}
