import { describe, expect, it } from "vitest";
import {
  addToSketch,
  emptySketch,
  estimateVisitors,
  mergeSketch,
  rankOf,
  SKETCH_REGISTERS,
} from "../src/scans/analytics/visitor-sketch.js";
import { packSketch, unpackSketch } from "../src/scans/analytics/sketch-encoding.js";

// Plain unit tests of the HyperLogLog sketch analytics counts distinct visitors with over long ranges.
// Visitors are numbers here, hashed to 64 bits as Postgres hashes visitor keys there; the top 12 bits
// choose the register.

/** MurmurHash3's 32-bit finalizer: every input bit moves every output bit. */
function mix(value: number): number {
  let h = value >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Notes visitor `visitor` in the sketch. */
function add(sketch: Uint8Array, visitor: number): void {
  const [high, low] = [mix(visitor), mix(visitor ^ 0x9e3779b9)];
  // The rank: 1 + the leading zeros of the 52 bits after the register's 12.
  const top = high & 0xfffff;
  const zeros = top !== 0 ? Math.clz32(top) - 12 : low !== 0 ? 20 + Math.clz32(low) : 52;
  addToSketch(sketch, high >>> 20, zeros + 1);
}

const sketchOf = (each: Iterable<number>) => {
  const sketch = emptySketch();
  for (const visitor of each) add(sketch, visitor);
  return sketch;
};
const visitors = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe("visitor sketches", () => {
  it("are 4 KiB", () => {
    expect(emptySketch().byteLength).toBe(SKETCH_REGISTERS);
    expect(SKETCH_REGISTERS).toBe(4096);
  });

  it("count nobody as zero and a handful of visitors exactly", () => {
    expect(estimateVisitors(emptySketch())).toBe(0);
    for (const n of [1, 2, 10]) expect(estimateVisitors(sketchOf(visitors(0, n)))).toBe(n);
    // Two of 50 visitors may share a register: linear counting still lands within one or two.
    expect(Math.abs(estimateVisitors(sketchOf(visitors(0, 50))) - 50)).toBeLessThanOrEqual(2);
  });

  // The standard error is 1.04 / sqrt(4096) = 1.6%; the OpenAPI document promises 5% at most
  // (three standard errors), which these fixed sets must meet.
  it.each([1_000, 10_000, 30_000, 100_000, 300_000])("estimate %i distinct visitors within 5%", (n) => {
    const estimate = estimateVisitors(sketchOf(visitors(0, n)));
    expect(Math.abs(estimate - n) / n).toBeLessThan(0.05);
  });

  it("count a visitor seen many times once", () => {
    const sketch = emptySketch();
    for (let round = 0; round < 20; round++) for (const visitor of visitors(0, 500)) add(sketch, visitor);
    expect(estimateVisitors(sketch)).toBe(estimateVisitors(sketchOf(visitors(0, 500))));
  });

  it("merge into the sketch of the union, in any order", () => {
    const days = [visitors(0, 20_000), visitors(10_000, 30_000), visitors(25_000, 50_000)];
    const union = emptySketch();
    for (const day of days) mergeSketch(union, sketchOf(day));
    expect(union).toEqual(sketchOf(visitors(0, 50_000)));
    const reversed = emptySketch();
    for (const day of days.reverse()) mergeSketch(reversed, sketchOf(day));
    expect(reversed).toEqual(union);
    expect(Math.abs(estimateVisitors(union) - 50_000) / 50_000).toBeLessThan(0.05);
  });

  it("rank the 52 bits after the register by one plus their leading zeros, as the stored sketches were built", () => {
    // The definition Postgres used (length of the bit string without its leading zeros), in BigInt.
    const reference = (bits: bigint) => 53 - bits.toString(2).replace(/^0+/, "").length;
    const edges = [
      0n,
      1n,
      2n,
      3n,
      2n ** 31n,
      2n ** 32n - 1n,
      2n ** 32n,
      2n ** 32n + 1n,
      2n ** 51n - 1n,
      2n ** 51n,
      2n ** 52n - 1n,
    ];
    const random = Array.from(
      { length: 2000 },
      (_, i) => (BigInt(mix(i)) << 20n) ^ BigInt(mix(i ^ 0x5bd1e995) >>> (i % 32)),
    );
    for (const bits of [...edges, ...random.map((value) => value & (2n ** 52n - 1n))])
      expect(rankOf(Number(bits))).toBe(reference(bits));
    expect([rankOf(0), rankOf(1), rankOf(2 ** 52 - 1)]).toEqual([53, 52, 1]);
  });
});

describe("stored sketches", () => {
  it("keep a sketch of few visitors sparse and one of many whole, and read both back as they were", () => {
    const few = emptySketch();
    for (const [register, rank] of [
      [0, 3],
      [257, 1],
      [4095, 52],
    ] as const)
      addToSketch(few, register, rank);
    const packed = packSketch(few);
    expect(packed).toEqual(new Uint8Array([0, 0, 3, 1, 1, 1, 15, 255, 52]));
    expect(unpackSketch(packed)).toEqual(few);
    const many = emptySketch();
    for (let register = 0; register < 2000; register++) addToSketch(many, register * 2, 1 + (register % 7));
    expect(packSketch(many).length).toBe(4096);
    expect(unpackSketch(packSketch(many))).toEqual(many);
  });
});
