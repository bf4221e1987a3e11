import { describe, expect, it } from "vitest";
import { parseCsv, readImport } from "../src/csv.ts";

describe("reading a CSV import", () => {
  it("splits quoted fields, doubled quotes, commas and line breaks inside quotes, CRLF and a BOM", async () => {
    expect(await parseCsv('\uFEFFa,b\r\n"x, ""y""","line\nbreak"\r\nlast,1')).toEqual([
      { line: 1, fields: ["a", "b"] },
      { line: 2, fields: ['x, "y"', "line\nbreak"] },
      { line: 4, fields: ["last", "1"] },
    ]);
  });

  it("turns rows into bulk items: tags split on ';', UTM gathered, empty cells left out", async () => {
    const { rows, failed } = await readImport(
      "name,destination_url,tags,utm_source,utm_campaign\nMenu,https://example.com/menu,a; b;,poster,\nBare,https://example.com,,,\n",
    );
    expect(failed).toEqual([]);
    expect(rows).toEqual([
      {
        line: 2,
        item: {
          name: "Menu",
          destination_url: "https://example.com/menu",
          tags: ["a", "b"],
          utm: { source: "poster" },
        },
      },
      { line: 3, item: { name: "Bare", destination_url: "https://example.com" } },
    ]);
  });

  it("reports a row with the wrong number of fields by its line, and sends the others", async () => {
    const { rows, failed } = await readImport(
      "name,destination_url\nGood,https://example.com\nBad,https://example.com,extra\n",
    );
    expect(rows.map((row) => row.line)).toEqual([2]);
    expect(failed).toEqual([{ line: 3, name: "Bad", reason: "has 3 fields where the header names 2" }]);
  });

  it("counts lines across blank lines and quoted line breaks, and reports a row whose quote never closes", async () => {
    const { rows, failed } = await readImport(
      'name,destination_url\n\n"Two\nlines",https://example.com/a\r\n\r\nNext,https://example.com/b\nOpen,"https://example.com/c\n',
    );
    expect(rows.map((row) => [row.line, row.item.name])).toEqual([
      [3, "Two\nlines"],
      [6, "Next"],
    ]);
    expect(failed).toEqual([expect.objectContaining({ line: 7, reason: expect.stringMatching(/^is not valid CSV/) })]);
  });

  it("refuses a file without the required columns or with unknown ones", async () => {
    await expect(readImport("")).rejects.toThrow(/empty/);
    await expect(readImport("name\nx\n")).rejects.toThrow(/no destination_url column/);
    await expect(readImport("name,destination_url,colour\n")).rejects.toThrow(/Unknown column colour/);
  });
});
