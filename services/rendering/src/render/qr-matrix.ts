import { createRequire } from "node:module";
import QRCode from "qrcode";
import { ErrorCorrection } from "@qrplatform/api/rendering";

const require = createRequire(import.meta.url);
// The block structure of each version and level (ISO/IEC 18004 table 9) as the encoder itself uses it,
// so our codeword map can never disagree with the symbols it draws.
const blockTable = require("qrcode/lib/core/error-correction-code.js") as {
  getBlocksCount(version: number, level: unknown): number;
  getTotalCodewordsCount(version: number, level: unknown): number;
};
const symbolTable = require("qrcode/lib/core/utils.js") as { getSymbolTotalCodewords(version: number): number };
const levels = require("qrcode/lib/core/error-correction-level.js") as Record<"L" | "M" | "Q" | "H", unknown>;
const alignment = require("qrcode/lib/core/alignment-pattern.js") as {
  getPositions(version: number): [number, number][];
};

const LEVEL_LETTER = {
  [ErrorCorrection.L]: "L",
  [ErrorCorrection.M]: "M",
  [ErrorCorrection.Q]: "Q",
  [ErrorCorrection.H]: "H",
} as const;

export type Level = keyof typeof LEVEL_LETTER;

/** One QR symbol: its modules, which of them are function patterns, and where its codewords lie. */
export interface QrMatrix {
  readonly version: number;
  readonly level: Level;
  /** Modules per side, without the quiet zone. */
  readonly size: number;
  isDark(row: number, col: number): boolean;
  /** Finder, separator, timing, alignment, format and version modules: never data. */
  isFunction(row: number, col: number): boolean;
  /** The codeword a data module belongs to, in placement order; -1 for function and remainder modules. */
  codewordOf(row: number, col: number): number;
  /** The centre (row, column) of each alignment pattern; version 1 has none. */
  readonly alignmentCentres: readonly (readonly [number, number])[];
  /** The Reed-Solomon block of each codeword, in placement order. */
  readonly codewordBlocks: readonly number[];
  readonly blocks: readonly BlockShape[];
}

/** How many codewords a Reed-Solomon block holds and how many wrong ones it can still correct. */
export interface BlockShape {
  readonly dataCodewords: number;
  readonly ecCodewords: number;
  readonly correctable: number;
}

/** Encodes content at a level with the smallest version that holds it. */
export function encodeQr(content: string, level: Level): QrMatrix {
  const letter = LEVEL_LETTER[level];
  const code = QRCode.create(content, { errorCorrectionLevel: letter });
  const { size, data, reservedBit } = code.modules;
  const blocks = blockShapes(code.version, letter);
  const codewordBlocks = interleavedBlockOrder(blocks);
  const codewordIndex = mapCodewordsToModules(size, reservedBit, codewordBlocks.length);
  return {
    version: code.version,
    level,
    size,
    blocks,
    codewordBlocks,
    alignmentCentres: code.version === 1 ? [] : alignment.getPositions(code.version),
    isDark: (row, col) => data[row * size + col] === 1,
    isFunction: (row, col) => reservedBit[row * size + col] === 1,
    codewordOf: (row, col) => codewordIndex[row * size + col]!,
  };
}

/**
 * Codewords in a small symbol that guard against misdecoding instead of correcting errors
 * (ISO/IEC 18004 table 9, "p"); every other version has none.
 */
function misdecodeProtection(version: number, level: "L" | "M" | "Q" | "H"): number {
  if (version === 1) return { L: 3, M: 2, Q: 1, H: 1 }[level];
  if (version === 2 && level === "L") return 2;
  if (version === 3 && level === "L") return 1;
  return 0;
}

function blockShapes(version: number, letter: "L" | "M" | "Q" | "H"): BlockShape[] {
  const level = levels[letter];
  const total = symbolTable.getSymbolTotalCodewords(version);
  const blockCount = blockTable.getBlocksCount(version, level);
  const dataTotal = total - blockTable.getTotalCodewordsCount(version, level);
  const ecCodewords = (total - dataTotal) / blockCount;
  const shortData = Math.floor(dataTotal / blockCount);
  const longBlocks = dataTotal % blockCount;
  const correctable = Math.floor((ecCodewords - misdecodeProtection(version, letter)) / 2);
  return Array.from({ length: blockCount }, (_, i) => ({
    dataCodewords: i < blockCount - longBlocks ? shortData : shortData + 1,
    ecCodewords,
    correctable,
  }));
}

/** The block of each codeword in the order they are placed: data interleaved across blocks, then error correction. */
function interleavedBlockOrder(blocks: readonly BlockShape[]): number[] {
  const order: number[] = [];
  const longest = Math.max(...blocks.map((b) => b.dataCodewords));
  for (let i = 0; i < longest; i++) {
    blocks.forEach((b, block) => {
      if (i < b.dataCodewords) order.push(block);
    });
  }
  for (let i = 0; i < blocks[0]!.ecCodewords; i++) {
    for (let block = 0; block < blocks.length; block++) order.push(block);
  }
  return order;
}

/** Walks the standard's zig-zag placement (two-column strips from the bottom right, skipping the timing column). */
function mapCodewordsToModules(size: number, reserved: Uint8Array, codewords: number): Int16Array {
  const codewordIndex = new Int16Array(size * size).fill(-1);
  let bit = 0;
  let row = size - 1;
  let step = -1;
  for (let col = size - 1; col > 0; col -= 2) {
    if (col === 6) col--;
    for (;;) {
      for (const c of [col, col - 1]) {
        const at = row * size + c;
        if (reserved[at] === 1) continue;
        const codeword = bit >> 3;
        if (codeword < codewords) codewordIndex[at] = codeword;
        bit++;
      }
      row += step;
      if (row < 0 || row >= size) {
        row -= step;
        step = -step;
        break;
      }
    }
  }
  return codewordIndex;
}
