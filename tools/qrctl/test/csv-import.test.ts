// The import's reading of a CSV file, as plain unit tests: records split from the byte stream in any
// chunking, a row too long to keep skipped to its end with the rows after it intact, and calls cut by
// bytes as well as rows.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_ROW_BYTES } from "../src/csv-columns.js";
import { batchesOf, checkImportFile, csvRecords } from "../src/csv-import.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "qrctl-csv-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The records of `text` fed in chunks of `size` bytes, as strings or sizes. */
async function recordsOf(text: string, size: number, maxBytes: number) {
  const bytes = Buffer.from(text);
  const chunks = async function* () {
    for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
  };
  const found: (string | number)[][] = [];
  for await (const record of csvRecords(chunks(), maxBytes))
    found.push("bytes" in record ? [record.line, record.bytes.toString()] : [record.line, -record.size]);
  return found;
}

describe("csvRecords", () => {
  it("ends a record at a newline outside quotes only, skips blank lines, and numbers records by their first line", async () => {
    const text =
      'name,destination_url\r\n"Two\nlines, and ""quotes""",https://example.com/a\r\n\r\nLast,https://example.com/b';
    for (const size of [1, 2, 7, 1024]) {
      expect(await recordsOf(text, size, 1000), `chunks of ${size}`).toEqual([
        [1, "name,destination_url\r\n"],
        [2, '"Two\nlines, and ""quotes""",https://example.com/a\r\n'],
        [5, "Last,https://example.com/b"],
      ]);
    }
  });

  it("skips a record longer than the limit to its end, keeping only its size, and goes on with the next in the same chunk", async () => {
    const long = `Long,"https://example.com/${"x".repeat(100)}\n${"y".repeat(100)}"\n`;
    const text = `A,https://example.com/a\n${long}B,https://example.com/b\n`;
    for (const size of [3, 64, 4096]) {
      expect(await recordsOf(text, size, 50), `chunks of ${size}`).toEqual([
        [1, "A,https://example.com/a\n"],
        [2, -Buffer.byteLength(long)],
        [4, "B,https://example.com/b\n"],
      ]);
    }
  });
});

describe("batchesOf", () => {
  it("cuts calls by bytes as well as rows, the same way every run, and carries an oversized row without sending it", async () => {
    const path = join(dir, "sizes.csv");
    const wide = (i: number) => `Wide ${i},https://example.com/${"w".repeat(40_000)}`;
    const lines = [
      "name,destination_url",
      ...Array.from({ length: 30 }, (_, i) => wide(i)),
      `Huge,https://example.com/${"h".repeat(MAX_ROW_BYTES)}`,
      ...Array.from({ length: 150 }, (_, i) => `Row ${i},https://example.com/${i}`),
    ];
    await writeFile(path, `${lines.join("\n")}\n`);
    const file = await checkImportFile(path);
    expect(file.rows).toBe(181);

    const cut = async () => {
      const batches = [];
      for await (const batch of batchesOf(file, "workspace", 100, 512 * 1024)) batches.push(batch);
      return batches;
    };
    const batches = await cut();
    for (const batch of batches) {
      const sent = batch.rows.filter((row) => "row" in row);
      expect(sent.length).toBeLessThanOrEqual(100);
      expect(
        Buffer.byteLength(
          JSON.stringify({
            items: sent.map((row) => ({ name: row.row.name, destination_url: row.row.destination_url })),
          }),
        ),
      ).toBeLessThanOrEqual(512 * 1024);
    }
    // Every row is in exactly one call, in order; the oversized one among them, by its line and size.
    expect(batches.flatMap((batch) => batch.rows.map((row) => row.index))).toEqual(
      Array.from({ length: 181 }, (_, i) => i),
    );
    expect(batches.flatMap((batch) => batch.rows).find((row) => !("row" in row))).toEqual({
      index: 30,
      line: 32,
      size: MAX_ROW_BYTES + 26,
    });
    expect(batches.map((batch) => [batch.first, batch.last])).toEqual([
      [0, 12],
      [13, 25],
      [26, 126],
      [127, 180],
    ]);
    expect((await cut()).map((batch) => batch.idempotencyKey)).toEqual(batches.map((batch) => batch.idempotencyKey));
  });
});
