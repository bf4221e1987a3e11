import { packSketch, unpackSketch } from "./sketch-encoding.js";

/**
 * How a link-day's row in links.scan_link_days holds its counts, in one bytea (`counts`): a format
 * byte (1), the day's scans, its distinct visitors (zigzag: correction deltas may take them below
 * zero for a while), then each breakdown value that has scans as its links.scan_values code, as the
 * step from the code before (codes ascend, so a step is at least 1), and its scans. Every number is a
 * varint: seven bits a byte, lowest first, the high bit set on every byte but the last. A day of 25
 * scans and 30 values fits in about 70 bytes, where two bigint arrays took about 500.
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
/** Eight varint bytes hold 56 bits, past any number a JS number holds exactly. */
const MAX_VARINT_BYTES = 8;

/** The counts of a link-day as links.scan_link_days.counts stores them. */
export function encodeDayCounts(counts: DayCounts): Uint8Array {
  const out = new ByteWriter();
  out.byte(FORMAT);
  out.varint(counts.scans);
  out.varint(zigzag(counts.uniqueScans));
  let previous = 0;
  for (const code of [...counts.values.keys()].sort((a, b) => a - b)) {
    const scans = counts.values.get(code)!;
    if (scans === 0) continue;
    if (code <= previous) throw new RangeError(`value code ${code} is not a positive integer`);
    out.varint(code - previous);
    out.varint(scans);
    previous = code;
  }
  return out.bytes();
}

/** The counts links.scan_link_days.counts holds; throws on bytes this format did not write. */
export function decodeDayCounts(bytes: Uint8Array): DayCounts {
  const input = new ByteReader(bytes);
  if (input.byte() !== FORMAT) throw new CorruptDayRow("unknown format");
  const scans = input.varint();
  const uniqueScans = unzigzag(input.varint());
  const values = new Map<number, number>();
  let code = 0;
  while (!input.done()) {
    const step = input.varint();
    if (step === 0) throw new CorruptDayRow("value codes out of order");
    code += step;
    values.set(code, input.varint());
  }
  return { scans, uniqueScans, values };
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
  const out = new ByteWriter();
  out.varint(zigzag(visitors));
  out.append(packSketch(registers));
  return out.bytes();
}

export function decodeDaySketch(bytes: Uint8Array): { visitors: number; registers: Uint8Array } {
  const input = new ByteReader(bytes);
  const visitors = unzigzag(input.varint());
  return { visitors, registers: unpackSketch(input.rest()) };
}

/** Stored bytes this version cannot read: a row written by no version of this format, or damaged. */
export class CorruptDayRow extends Error {
  constructor(reason: string) {
    super(`a links.scan_link_days row cannot be read: ${reason}`);
  }
}

function zigzag(n: number): number {
  return n < 0 ? -2 * n - 1 : 2 * n;
}

function unzigzag(n: number): number {
  return n % 2 === 1 ? -(n + 1) / 2 : n / 2;
}

class ByteWriter {
  private buffer = new Uint8Array(64);
  private length = 0;

  byte(value: number): void {
    if (this.length === this.buffer.length) {
      const grown = new Uint8Array(this.buffer.length * 2);
      grown.set(this.buffer);
      this.buffer = grown;
    }
    this.buffer[this.length++] = value;
  }

  /** Division rather than bit operators, which would cut a number to 32 bits. */
  varint(value: number): void {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${value} is not a count a day row holds`);
    while (value >= 0x80) {
      this.byte((value % 0x80) | 0x80);
      value = Math.floor(value / 0x80);
    }
    this.byte(value);
  }

  append(bytes: Uint8Array): void {
    for (const value of bytes) this.byte(value);
  }

  bytes(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}

class ByteReader {
  private at = 0;

  constructor(private readonly input: Uint8Array) {}

  done(): boolean {
    return this.at >= this.input.length;
  }

  byte(): number {
    if (this.done()) throw new CorruptDayRow("it ends early");
    return this.input[this.at++]!;
  }

  varint(): number {
    let value = 0;
    for (let shift = 1, read = 0; ; shift *= 0x80, read++) {
      if (read === MAX_VARINT_BYTES) throw new CorruptDayRow("a number runs past 8 bytes");
      const next = this.byte();
      value += (next & 0x7f) * shift;
      if (next < 0x80) break;
    }
    if (!Number.isSafeInteger(value)) throw new CorruptDayRow("a number is past 2^53");
    return value;
  }

  rest(): Uint8Array {
    const rest = this.input.subarray(this.at);
    this.at = this.input.length;
    return rest;
  }
}
