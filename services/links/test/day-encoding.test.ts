import { describe, expect, it } from "vitest";
import {
  CorruptDayRow,
  decodeDayCounts,
  decodeDaySketch,
  emptyDayCounts,
  encodeDayCounts,
  encodeDaySketch,
} from "../src/scans/analytics/day-encoding.js";
import { emptySketch, SKETCH_REGISTERS } from "../src/scans/analytics/visitor-sketch.js";

describe("a link-day's packed counts", () => {
  it("read back as written, values in code order", () => {
    const counts = {
      scans: 25,
      uniqueScans: 4,
      values: new Map([
        [9, 3],
        [2, 20],
        [300, 2],
      ]),
    };
    const decoded = decodeDayCounts(encodeDayCounts(counts));
    expect(decoded).toEqual(counts);
    expect([...decoded.values.keys()]).toEqual([2, 9, 300]);
  });

  it("take a byte a number while numbers are small: a usual day in a few dozen bytes", () => {
    const values = new Map(Array.from({ length: 30 }, (_, i) => [200 + i * 3, 1 + (i % 5)]));
    // Format byte, scans, visitors, then two bytes a value but the first, whose code takes one more.
    expect(encodeDayCounts({ scans: 25, uniqueScans: 4, values })).toHaveLength(3 + 30 * 2 + 1);
  });

  it("hold codes past 2^31 and counts past 2^32 exactly, up to 2^53", () => {
    const counts = {
      scans: 2 ** 40 + 7,
      uniqueScans: 2 ** 33 + 1,
      values: new Map([
        [2 ** 31 + 5, 2 ** 32 + 3],
        [2 ** 53 - 1, Number.MAX_SAFE_INTEGER],
      ]),
    };
    expect(decodeDayCounts(encodeDayCounts(counts))).toEqual(counts);
  });

  it("hold distinct visitors below zero, which a correction may leave for a while", () => {
    const counts = { scans: 0, uniqueScans: -3, values: new Map<number, number>() };
    expect(decodeDayCounts(encodeDayCounts(counts))).toEqual(counts);
  });

  it("leave out values without scans, and read an empty day as nothing counted", () => {
    const packed = encodeDayCounts({
      scans: 1,
      uniqueScans: 1,
      values: new Map([
        [4, 0],
        [5, 1],
      ]),
    });
    expect(decodeDayCounts(packed).values).toEqual(new Map([[5, 1]]));
    expect(decodeDayCounts(encodeDayCounts(emptyDayCounts()))).toEqual(emptyDayCounts());
    expect(encodeDayCounts(emptyDayCounts())).toEqual(new Uint8Array([1, 0, 0]));
  });

  it("refuse counts no row can hold", () => {
    expect(() => encodeDayCounts({ scans: -1, uniqueScans: 0, values: new Map() })).toThrow(RangeError);
    expect(() => encodeDayCounts({ scans: 1.5, uniqueScans: 0, values: new Map() })).toThrow(RangeError);
    expect(() => encodeDayCounts({ scans: 2 ** 53, uniqueScans: 0, values: new Map() })).toThrow(RangeError);
    expect(() => encodeDayCounts({ scans: 1, uniqueScans: 0, values: new Map([[0, 1]]) })).toThrow(RangeError);
  });

  it("refuse bytes this format did not write rather than read wrong counts", () => {
    const refused = (bytes: number[]) => () => decodeDayCounts(new Uint8Array(bytes));
    expect(refused([])).toThrow(CorruptDayRow);
    // An unknown format.
    expect(refused([2, 0, 0])).toThrow(/unknown format/);
    // Cut short: no visitors, then a value's code without its scans, then a varint cut in its middle.
    expect(refused([1, 5])).toThrow(/ends early/);
    expect(refused([1, 5, 2, 3])).toThrow(/ends early/);
    expect(refused([1, 0x85])).toThrow(/ends early/);
    // A code that does not ascend.
    expect(refused([1, 5, 2, 3, 1, 0, 1])).toThrow(/out of order/);
    // Longer than any number this format writes.
    expect(refused([1, ...Array(8).fill(0xff), 1, 0])).toThrow(/past 2\^53/);
    expect(refused([1, ...Array(7).fill(0xff), 0x7f, 0])).toThrow(/past 2\^53/);
  });
});

describe("a link-day's packed sketch", () => {
  it("reads back its registers and visitors, sparse or whole", () => {
    const sparse = emptySketch();
    sparse[7] = 3;
    sparse[4095] = 12;
    expect(decodeDaySketch(encodeDaySketch(300, sparse))).toEqual({ visitors: 300, registers: sparse });
    expect(encodeDaySketch(300, sparse)).toHaveLength(2 + 2 * 3);
    const whole = emptySketch().map((_, i) => 1 + (i % 20));
    const packed = encodeDaySketch(1_000_000, whole);
    expect(packed).toHaveLength(3 + SKETCH_REGISTERS);
    expect(decodeDaySketch(packed)).toEqual({ visitors: 1_000_000, registers: whole });
  });
});
