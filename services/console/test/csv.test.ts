import { describe, expect, it } from "vitest";
import { parseCsv, readImport } from "../src/csv.ts";

describe("reading a CSV import", () => {
  it("splits quoted fields, doubled quotes, commas and line breaks inside quotes, CRLF and a BOM", () => {
    expect(parseCsv('\uFEFFa,b\r\n"x, ""y""","line\nbreak"\r\nlast,1')).toEqual([
      { line: 1, fields: ["a", "b"] },
      { line: 2, fields: ['x, "y"', "line\nbreak"] },
      { line: 4, fields: ["last", "1"] },
    ]);
  });

  it("turns rows into bulk items: tags split on ';', UTM gathered, empty cells left out", () => {
    const { rows, failed } = readImport(
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

  it("reports a row with the wrong number of fields by its line, and sends the others", () => {
    const { rows, failed } = readImport(
      "name,destination_url\nGood,https://example.com\nBad,https://example.com,extra\n",
    );
    expect(rows.map((row) => row.line)).toEqual([2]);
    expect(failed).toEqual([{ line: 3, name: "Bad", reason: "has 3 fields where the header names 2" }]);
  });

  it("refuses a file without the required columns or with unknown ones", () => {
    expect(() => readImport("")).toThrow(/empty/);
    expect(() => readImport("name\nx\n")).toThrow(/no destination_url column/);
    expect(() => readImport("name,destination_url,colour\n")).toThrow(/Unknown column colour/);
  });
});
