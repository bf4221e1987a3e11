import sharp from "sharp";

/** The largest logo we accept, in decoded bytes. */
export const MAX_LOGO_BYTES = 256 * 1024;

/**
 * The widest and tallest logo we accept, in pixels. The file size says nothing of what an image
 * decodes to: a 194 KB PNG of 40000x40000 pixels is 6 GB of pixels once the rasterizer decodes it.
 * At this bound a logo decodes to at most 64 MiB (RGBA), like a 4096 px export, and it is still
 * three times sharper than the largest logo ever drawn (0.3 of a 4096 px code).
 */
export const MAX_LOGO_SIDE_PIXELS = 4096;

/** The image types a logo may have, with the bytes every file of that type starts with. */
const LOGO_TYPES: Record<string, Uint8Array> = {
  "image/png": Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
  "image/jpeg": Uint8Array.of(0xff, 0xd8, 0xff),
};

const DATA_URI = /^data:(image\/[a-z]+);base64,([A-Za-z0-9+/]*={0,2})$/i;

/** A logo whose data URI was read: its canonical URI and decoded bytes. */
export interface LogoImage {
  readonly mediaType: string;
  readonly bytes: Buffer;
  /** The URI rebuilt from the bytes: lower-case media type, canonical base64. */
  readonly dataUri: string;
}

/**
 * Why a data URI was refused: `too_large` is about the file's size, `logo_too_many_pixels` about the
 * size of the image it decodes to, `invalid_logo` about everything else.
 */
export type LogoProblem = { reason: "invalid_logo" | "too_large" | "logo_too_many_pixels"; description: string };

/**
 * Reads a logo data URI: a base64 PNG or JPEG whose bytes really are of the declared type, at most
 * MAX_LOGO_BYTES decoded. Oversized input is refused before it is decoded.
 */
export function readLogoDataUri(uri: string): LogoImage | LogoProblem {
  const comma = uri.indexOf(",");
  const encodedLength = comma < 0 ? 0 : uri.length - comma - 1;
  if (encodedLength > Math.ceil(MAX_LOGO_BYTES / 3) * 4) return tooLarge();
  const match = DATA_URI.exec(uri);
  if (!match) {
    return invalid("must be a base64 data URI of a PNG or JPEG image, such as data:image/png;base64,...");
  }
  const mediaType = match[1]!.toLowerCase();
  const base64 = match[2]!;
  const magic = LOGO_TYPES[mediaType];
  if (!magic) return invalid("must be a PNG (image/png) or JPEG (image/jpeg) image");
  if (base64.length % 4 !== 0) return invalid("is not valid base64");
  const bytes = Buffer.from(base64, "base64");
  if (bytes.length > MAX_LOGO_BYTES) return tooLarge();
  if (bytes.length < magic.length || !magic.every((b, i) => bytes[i] === b)) {
    return invalid(`is not a ${mediaType === "image/png" ? "PNG" : "JPEG"} image, as its media type says`);
  }
  return { mediaType, bytes, dataUri: `data:${mediaType};base64,${bytes.toString("base64")}` };
}

/** Whether reading a logo failed. */
export function isLogoProblem(result: LogoImage | LogoProblem): result is LogoProblem {
  return "reason" in result;
}

function invalid(description: string): LogoProblem {
  return { reason: "invalid_logo", description };
}

function tooLarge(): LogoProblem {
  return { reason: "too_large", description: `must be at most ${MAX_LOGO_BYTES / 1024} KiB once decoded` };
}

/**
 * Checks what a logo's bytes decode to, reading only the image's header (no pixel is decoded): an
 * image sharp cannot read is `invalid_logo`, one wider or taller than MAX_LOGO_SIDE_PIXELS is
 * `logo_too_many_pixels`. Asynchronous, as sharp reads off the event loop; the synchronous
 * readLogoDataUri has checked the file already.
 */
export async function logoPixelProblem(image: Pick<LogoImage, "bytes">): Promise<LogoProblem | undefined> {
  let width: number;
  let height: number;
  try {
    // No pixel limit here: sharp would refuse a large image with the same error as a corrupt one,
    // and the dimensions are compared below with a message that says which bound was passed.
    ({ width, height } = await sharp(image.bytes, { limitInputPixels: false }).metadata());
  } catch {
    return invalid("could not be read as an image");
  }
  if (width <= MAX_LOGO_SIDE_PIXELS && height <= MAX_LOGO_SIDE_PIXELS) return undefined;
  return {
    reason: "logo_too_many_pixels",
    description: `is ${width}x${height} pixels; a logo may be at most ${MAX_LOGO_SIDE_PIXELS}x${MAX_LOGO_SIDE_PIXELS}, whatever its file size`,
  };
}

/** The pixel problem of a normalized logo data URI, as logoPixelProblem judges it. */
export function dataUriPixelProblem(dataUri: string): Promise<LogoProblem | undefined> {
  return logoPixelProblem({ bytes: Buffer.from(dataUri.slice(dataUri.indexOf(",") + 1), "base64") });
}
