import { ErrorCorrection } from "@qrplatform/api/rendering";

/**
 * The most bytes a QR code (version 40, byte mode) holds at each error-correction level, from
 * ISO/IEC 18004 table 7. Byte mode is what URLs are encoded in, so it is the bound we enforce.
 */
const BYTE_CAPACITY: Record<Exclude<ErrorCorrection, ErrorCorrection.UNSPECIFIED>, number> = {
  [ErrorCorrection.L]: 2953,
  [ErrorCorrection.M]: 2331,
  [ErrorCorrection.Q]: 1663,
  [ErrorCorrection.H]: 1273,
};

/** The largest content in UTF-8 bytes that a QR code at this level can encode. */
export function byteCapacity(level: Exclude<ErrorCorrection, ErrorCorrection.UNSPECIFIED>): number {
  return BYTE_CAPACITY[level];
}

/** The content's size as the code encodes it: UTF-8 bytes. */
export function contentBytes(content: string): number {
  return Buffer.byteLength(content, "utf8");
}
