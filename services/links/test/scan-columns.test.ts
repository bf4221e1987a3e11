// The scan rules' fast path: a batch that the plain comparisons accept must be one that zod's scan
// schema accepts, so that skipping zod never lets through a scan the rules refuse. Generated scans are
// valid, or valid but for one field moved to either side of its rule.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ScanSchema, type Scan } from "@qrplatform/api/links";
import {
  batchSchema,
  checkedScanColumns,
  MAX_SCANS_PER_BATCH,
  NO_VARIANT,
  plainlyValid,
  scanColumnsOf,
  type ScanColumns,
} from "../src/scans/scan-columns.js";

/**
 * Text of exactly `length` UTF-16 units: ASCII, or any code points (zod counts those, so a string of
 * astral characters is shorter to it than to `length`, and the plain check refuses it first).
 */
const textOf = (length: number) =>
  fc.oneof(
    fc.string({ minLength: length, maxLength: length }),
    fc
      .string({ minLength: length, maxLength: length, unit: "binary" })
      .map((t) => t.padEnd(length, "x").slice(0, length)),
  );
/** Any text up to `max`, and text of one less, exactly `max` and one more units, where the rules draw their line. */
const nearLimit = (max: number) =>
  fc.oneof(fc.string({ maxLength: max }), fc.integer({ min: max - 1, max: max + 1 }).chain(textOf));

/** A scan every rule accepts. */
const validFields: Record<string, fc.Arbitrary<unknown>> = {
  id: fc.oneof(
    fc.uuid(),
    fc.uuid().map((id) => id.toUpperCase()),
  ),
  linkId: fc.uuid(),
  scanTime: fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => timestampFromMs(ms)),
  country: fc.constantFrom("", "DE", "US"),
  deviceType: fc.constantFrom("mobile", "tablet", "desktop", "other"),
  os: fc.string({ maxLength: 64 }),
  browser: fc.string({ maxLength: 64 }),
  referrerHost: fc.string({ maxLength: 253 }),
  visitorKey: textOf(16),
  ruleId: fc.oneof(
    fc.constant(""),
    fc.uuid(),
    fc.uuid().map((id) => id.toUpperCase()),
  ),
  variant: fc.constant(undefined),
};
/** For each field, values on both sides of its rule. */
const edgeFields: Record<string, fc.Arbitrary<unknown>> = {
  id: fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.uuid().map((id) => `${id}x`),
    fc.uuid().map((id) => id.slice(1)),
  ),
  linkId: fc.oneof(fc.string({ maxLength: 40 }), fc.constant("")),
  scanTime: fc.oneof(
    fc.constant(undefined),
    fc.constantFrom(8.64e15, 8.64e15 + 1, -8.64e15, -8.64e15 - 1, 1e17).map((ms) => timestampFromMs(ms)),
  ),
  country: fc.oneof(fc.constantFrom("de", "D", "DEU", "ÄÖ", " D"), fc.string({ maxLength: 3 })),
  deviceType: fc.oneof(fc.constantFrom("Mobile", "", "phone"), fc.string({ maxLength: 8 })),
  os: nearLimit(64),
  browser: nearLimit(64),
  referrerHost: nearLimit(253),
  visitorKey: fc.oneof(fc.constant(""), nearLimit(64)),
  ruleId: fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.uuid().map((id) => `${id}/1`),
  ),
  // Beside a rule id, 0–3 is valid; beside an empty one, no variant is.
  variant: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constant(2 ** 32 - 1)),
};
/** A valid scan, or one with a single field moved to either side of its rule. */
const anyScan: fc.Arbitrary<Scan> = fc
  .tuple(fc.record(validFields), fc.option(fc.constantFrom(...Object.keys(edgeFields)), { nil: undefined }))
  .chain(([fields, edge]) =>
    edge ? edgeFields[edge]!.map((value) => ({ ...fields, [edge]: value })) : fc.constant(fields),
  )
  .map((fields) => create(ScanSchema, fields as MessageInitShape<typeof ScanSchema>));

/** The scans as columns, unchecked: as a spooled batch may come off the disk. */
const columnsOf = (scans: Scan[]): ScanColumns => ({
  id: scans.map((scan) => scan.id),
  linkId: scans.map((scan) => scan.linkId),
  scannedAtMs: scans.map((scan) => (scan.scanTime ? timestampMs(scan.scanTime) : Number.NaN)),
  country: scans.map((scan) => scan.country),
  deviceType: scans.map((scan) => scan.deviceType),
  os: scans.map((scan) => scan.os),
  browser: scans.map((scan) => scan.browser),
  referrerHost: scans.map((scan) => scan.referrerHost),
  visitorKey: scans.map((scan) => scan.visitorKey),
  ruleId: scans.map((scan) => scan.ruleId),
  variant: scans.map((scan) => scan.variant ?? NO_VARIANT),
});

const zodAccepts = (scans: Scan[]) =>
  batchSchema.safeParse(
    scans.map((scan) => ({ ...scan, scanTime: scan.scanTime ? timestampDate(scan.scanTime) : undefined })),
  ).success;

describe("scan columns", () => {
  it("accept by plain comparisons only batches that the scan schema accepts, and most valid batches", () => {
    let plain = 0;
    fc.assert(
      fc.property(fc.array(anyScan, { minLength: 1, maxLength: 3 }), (scans) => {
        if (!plainlyValid(columnsOf(scans))) return;
        plain++;
        expect(zodAccepts(scans)).toBe(true);
      }),
      { numRuns: 5000 },
    );
    // The property says nothing if the fast path never accepts anything.
    expect(plain).toBeGreaterThan(1000);
  });

  it("refuse what the schema refuses, whichever path checked it, and keep ids in lower case", () => {
    fc.assert(
      fc.property(fc.array(anyScan, { maxLength: 3 }), (scans) => {
        if (zodAccepts(scans)) {
          const columns = scanColumnsOf(scans);
          expect(columns.id).toEqual(scans.map((scan) => scan.id.toLowerCase()));
          expect(columns.scannedAtMs).toEqual(scans.map((scan) => timestampDate(scan.scanTime!).getTime()));
        } else {
          expect(() => scanColumnsOf(scans)).toThrow();
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("check columns read back from the disk by the same rules, and keep ids in lower case", () => {
    fc.assert(
      fc.property(fc.array(anyScan, { maxLength: 3 }), (scans) => {
        if (zodAccepts(scans)) {
          expect(checkedScanColumns(columnsOf(scans))).toEqual(scanColumnsOf(scans));
        } else {
          expect(() => checkedScanColumns(columnsOf(scans))).toThrow();
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("send a batch over the limit to the schema, which refuses it", () => {
    const scan = create(ScanSchema, {
      id: crypto.randomUUID(),
      linkId: crypto.randomUUID(),
      scanTime: timestampFromMs(Date.now()),
      deviceType: "mobile",
      visitorKey: "v",
    });
    const batch = Array.from({ length: MAX_SCANS_PER_BATCH + 1 }, () => scan);
    expect(plainlyValid(columnsOf(batch))).toBe(false);
    expect(() => scanColumnsOf(batch)).toThrow();
    expect(() => checkedScanColumns(columnsOf(batch))).toThrow();
  });
});
