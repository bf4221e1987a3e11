// PNG files made byte by byte for tests: a decompression bomb (a small file whose pixels are not),
// and the chunks any hand-made PNG is built of.
import { createDeflate, crc32 } from "node:zlib";

/**
 * A valid one-colour PNG of `width` x `height` pixels at one bit per pixel. Identical rows compress
 * about a thousandfold, so 40000x40000 (1.6 gigapixels) is a file of about 200 KB. The rows are
 * streamed through the compressor, so making it never holds the raw image either.
 */
export async function hugeBlankPng(width = 40000, height = 40000): Promise<Buffer> {
  const row = Buffer.alloc(1 + Math.ceil(width / 8)); // filter byte 0, then all-black bits
  const deflate = createDeflate({ level: 9 });
  const compressed: Buffer[] = [];
  deflate.on("data", (chunk: Buffer) => compressed.push(chunk));
  const done = new Promise((resolve, reject) => deflate.on("end", resolve).on("error", reject));
  for (let y = 0; y < height; y++) {
    if (!deflate.write(row)) await new Promise((resolve) => deflate.once("drain", resolve));
  }
  deflate.end();
  await done;

  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([1, 0, 0, 0, 0], 8); // 1-bit greyscale, deflate, no filter, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", Buffer.concat(compressed)),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/** One PNG chunk: length, type, data and the CRC over type and data. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}
