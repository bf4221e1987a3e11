import { SKETCH_REGISTERS } from "./visitor-sketch.js";

/**
 * How a day's sketch is stored in its row of links.scan_link_days (after its visitors: see
 * day-encoding.ts). Most link-days see a few dozen visitors, so most of a sketch's 4,096 registers are zero: such a sketch is kept sparse, three bytes per
 * register set (its index, high byte first, then its rank), and a sketch with more registers set is
 * kept whole. 4,096 bytes is always whole, since a sparse one is at most 1,365 × 3 = 4,095.
 */
export function packSketch(registers: Uint8Array): Uint8Array {
  let set = 0;
  for (const rank of registers) if (rank > 0) set++;
  if (set * 3 >= SKETCH_REGISTERS) return registers;
  const packed = new Uint8Array(set * 3);
  let at = 0;
  for (let register = 0; register < SKETCH_REGISTERS; register++) {
    const rank = registers[register]!;
    if (rank === 0) continue;
    packed[at++] = register >> 8;
    packed[at++] = register & 0xff;
    packed[at++] = rank;
  }
  return packed;
}

/** A stored sketch's registers, whole or sparse (see {@link packSketch}). */
export function unpackSketch(stored: Uint8Array): Uint8Array {
  if (stored.length === SKETCH_REGISTERS) return new Uint8Array(stored);
  const registers = new Uint8Array(SKETCH_REGISTERS);
  for (let at = 0; at + 2 < stored.length; at += 3) registers[(stored[at]! << 8) | stored[at + 1]!] = stored[at + 2]!;
  return registers;
}
