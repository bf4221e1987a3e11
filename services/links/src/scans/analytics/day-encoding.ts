import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import { packSketch, unpackSketch } from "./sketch-encoding.js";

/**
 * How a link-day's row in links.scan_link_days holds its counts, in one bytea (`counts`): a format
 * byte (1), the day's scans, its distinct visitors (zigzag: correction deltas may take them below
 * zero for a while), then each breakdown value that has scans as its links.scan_values code, as the
 * step from the code before (codes ascend, so a step is at least 1), and its scans. Every number is a
 * varint as protobuf writes them (seven bits a byte, lowest first, the high bit set on every byte but
 * the last; the distinct visitors as a zigzag `sint64`), written and read by @bufbuild/protobuf's wire
 * codec. A day of 25 scans and 30 values fits in about 70 bytes, where two bigint arrays took about 500.
 *
 * Numbers are JS numbers, exact to 2^53; a count or code past that is refused rather than rounded.
 * The migration 20270310T1000_packed_day_rollups spells the same format in SQL.
 */
export interface DayCounts {
  scans: number;
  uniqueScans: number;
  /** Scans by links.scan_values code; a value with no scans is left out. */
  values: Map<number, number>;
}

const FORMAT = 1;

/** The counts of a link-day as links.scan_link_days.counts stores them. */
export function encodeDayCounts(counts: DayCounts): Uint8Array {
  const out = new BinaryWriter();
  out.uint32(FORMAT);
  out.uint64(count(counts.scans));
  out.sint64(signedCount(counts.uniqueScans));
  let previous = 0;
  for (const code of [...counts.values.keys()].sort((a, b) => a - b)) {
    const scans = counts.values.get(code)!;
    if (scans === 0) continue;
    if (code <= previous) throw new RangeError(`value code ${code} is not a positive integer`);
    out.uint64(count(code - previous));
    out.uint64(count(scans));
    previous = code;
  }
  return out.finish();
}

/** The counts links.scan_link_days.counts holds; throws on bytes this format did not write. */
export function decodeDayCounts(bytes: Uint8Array): DayCounts {
  return readingRow(bytes, (input) => {
    if (input.uint32() !== FORMAT) throw new CorruptDayRow("unknown format");
    const scans = numberOf(input.uint64());
    const uniqueScans = numberOf(input.sint64());
    const values = new Map<number, number>();
    let code = 0;
    while (input.pos < input.len) {
      const step = numberOf(input.uint64());
      if (step === 0) throw new CorruptDayRow("value codes out of order");
      code += step;
      values.set(code, numberOf(input.uint64()));
    }
    return { scans, uniqueScans, values };
  });
}

/** The counts of a link-day with nothing counted: the row a sketch makes when no fold has written one. */
export function emptyDayCounts(): DayCounts {
  return { scans: 0, uniqueScans: 0, values: new Map() };
}

/**
 * A day's HyperLogLog sketch as links.scan_link_days.sketch stores it: the distinct visitors the day
 * had when it was built (a zigzag varint), then its registers as sketch-encoding.ts packs them.
 */
export function encodeDaySketch(visitors: number, registers: Uint8Array): Uint8Array {
  return new BinaryWriter().sint64(signedCount(visitors)).raw(packSketch(registers)).finish();
}

export function decodeDaySketch(bytes: Uint8Array): { visitors: number; registers: Uint8Array } {
  return readingRow(bytes, (input) => {
    const visitors = numberOf(input.sint64());
    return { visitors, registers: unpackSketch(bytes.subarray(input.pos)) };
  });
}

/** Stored bytes this version cannot read: a row written by no version of this format, or damaged. */
export class CorruptDayRow extends Error {
  constructor(reason: string) {
    super(`a links.scan_link_days row cannot be read: ${reason}`);
  }
}

/** A count as a row holds it: a whole number from 0 to 2^53 - 1, which a JS number holds exactly. */
function count(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${value} is not a count a day row holds`);
  return value;
}

function signedCount(value: number): number {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${value} is not a count a day row holds`);
  return value;
}

/** A varint read back as a number, refused past what a JS number holds exactly. */
function numberOf(value: bigint | string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw new CorruptDayRow("a number is past 2^53");
  return number;
}

/** Reads a stored row, refusing bytes that end inside a number as the row's own damage. */
function readingRow<T>(bytes: Uint8Array, read: (input: BinaryReader) => T): T {
  try {
    return read(new BinaryReader(bytes));
  } catch (error) {
    if (error instanceof CorruptDayRow) throw error;
    throw new CorruptDayRow("it ends early");
  }
}
