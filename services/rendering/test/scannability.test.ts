import { describe, expect, it } from "vitest";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import fc from "fast-check";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { DesignSchema, ErrorCorrection, FrameType } from "@qrplatform/api/rendering";
import { checkDesign, normalizeDesign } from "../src/design/design-rules.js";
import { encodeQr } from "../src/render/qr-matrix.js";
import { renderSvg } from "../src/render/svg.js";

const CONTENT = "https://qr.example.com/ab3k9mzq";
const LOGO = {
  dataUri:
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC",
};

const problems = (init: MessageInitShape<typeof DesignSchema>, content = CONTENT) =>
  checkDesign(create(DesignSchema, init), content).problems.map((p) => `${p.field} ${p.reason}`);

describe("the QR matrix and its codeword map", () => {
  it("matches the standard's block structure and gives every codeword exactly eight modules", () => {
    // ISO/IEC 18004 table 9, version 5-Q: two blocks of 15 and two of 16 data codewords, 18 EC each.
    const matrix = encodeQr("x".repeat(50), ErrorCorrection.Q);
    expect(matrix.version).toBe(5);
    expect(matrix.blocks.map((b) => [b.dataCodewords, b.ecCodewords, b.correctable])).toEqual([
      [15, 18, 9],
      [15, 18, 9],
      [16, 18, 9],
      [16, 18, 9],
    ]);
    const modulesPerCodeword = new Map<number, number>();
    for (let row = 0; row < matrix.size; row++)
      for (let col = 0; col < matrix.size; col++) {
        const codeword = matrix.codewordOf(row, col);
        if (codeword >= 0) modulesPerCodeword.set(codeword, (modulesPerCodeword.get(codeword) ?? 0) + 1);
      }
    expect(modulesPerCodeword.size).toBe(134);
    expect([...modulesPerCodeword.values()].every((n) => n === 8)).toBe(true);
    expect(matrix.codewordBlocks.filter((b) => b === 3)).toHaveLength(34);
  });

  it("counts misdecode-protection codewords out of a small symbol's correction", () => {
    // Version 1-L: 7 EC codewords of which 3 only guard against misdecoding, so 2 errors are correctable.
    expect(encodeQr("hello", ErrorCorrection.L).blocks).toEqual([
      { dataCodewords: 19, ecCodewords: 7, correctable: 2 },
    ]);
  });
});

describe("designs that would not scan", () => {
  it("refuses light-on-dark and low-contrast colours, and accepts the threshold", () => {
    expect(problems({ foreground: "#ffffff", background: "#000000" })).toEqual(["design.foreground inverted_colors"]);
    expect(problems({ foreground: "#aaaaaa" })).toEqual(["design.foreground low_contrast"]); // 2.32:1
    expect(problems({ foreground: "#949494" })).toEqual([]); // 3.03:1
    expect(problems({ foreground: "#959595" })).toEqual(["design.foreground low_contrast"]); // 2.99:1
    expect(problems({ foreground: "#1a237e", background: "#fff59d" })).toEqual([]);
    const [problem] = checkDesign(create(DesignSchema, { foreground: "#aaaaaa" }), "").problems;
    expect(problem?.description).toMatch(/2\.32:1.*3:1/);
  });

  it("refuses a logo that hides more than the code can recover, naming the numbers", () => {
    expect(problems({ logo: { ...LOGO, scale: 0.3 } })).toEqual([]); // H by default with a logo
    expect(problems({ errorCorrection: ErrorCorrection.L, logo: { ...LOGO, scale: 0.1 } })).toEqual([
      "design.logo.scale logo_too_large",
    ]);
    expect(problems({ errorCorrection: ErrorCorrection.M, logo: { ...LOGO, scale: 0.2 } })).toEqual([
      "design.logo.scale logo_too_large",
    ]);
    expect(problems({ errorCorrection: ErrorCorrection.M, logo: { ...LOGO, scale: 0.1 } })).toEqual([]);
    const [problem] = checkDesign(
      create(DesignSchema, { errorCorrection: ErrorCorrection.M, logo: { ...LOGO, scale: 0.2 } }),
      CONTENT,
    ).problems;
    expect(problem?.description).toMatch(/hides 12 codewords of a block that corrects 13 at error correction M/);
  });

  it("refuses a logo over the central alignment pattern of a version-7 code", () => {
    const long = `https://links.some-long-brand-name.example.com/${"s".repeat(17)}`;
    expect(encodeQr(long, ErrorCorrection.H).version).toBe(7);
    expect(problems({ logo: { ...LOGO, scale: 0.1 } }, long)).toEqual(["design.logo logo_hides_pattern"]);
  });

  it("judges the logo only once the content is known", () => {
    expect(problems({ errorCorrection: ErrorCorrection.L, logo: LOGO }, "")).toEqual([]);
  });
});

describe("SVG safety", () => {
  const ALLOWED_ELEMENTS = new Set(["svg", "rect", "path", "g", "text", "image"]);
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "",
    preserveOrder: true,
    processEntities: true,
  });

  /** Every element and attribute of a parsed document, depth first. */
  function* walk(nodes: Record<string, unknown>[]): Generator<[string, Record<string, string>, unknown[]]> {
    for (const node of nodes) {
      const name = Object.keys(node).find((k) => k !== ":@")!;
      const attributes = (node[":@"] ?? {}) as Record<string, string>;
      const children = node[name] as unknown[];
      yield [name, attributes, children];
      if (Array.isArray(children)) yield* walk(children as Record<string, unknown>[]);
    }
  }

  it("always yields well-formed XML with no script, handler or external reference, whatever the labels hold", () => {
    const hostile = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 40 }),
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.constantFrom(
        "<script>alert(1)</script>",
        '"><svg onload=alert(1)>',
        "]]><!ENTITY x SYSTEM 'file:///etc/passwd'>",
        "&amp;&#x3c;&lt;",
        "' onmouseover='x",
        "<image href='http://evil.example/x.png'/>",
        "\uFFFE\uFFFF\uD800",
        "\u0000\u001b[31m",
      ),
    );
    const matrix = encodeQr(CONTENT, ErrorCorrection.M);
    fc.assert(
      fc.property(
        hostile,
        hostile,
        fc.constantFrom(FrameType.SQUARE, FrameType.ROUNDED, FrameType.CIRCLE),
        (top, bottom, type) => {
          // Straight to the renderer, past the label rules, as if a stored design had slipped through them.
          const { design } = normalizeDesign(create(DesignSchema, { frame: { enabled: true, type }, logo: LOGO }));
          design.frame!.labelTop = top;
          design.frame!.labelBottom = bottom;
          const svg = renderSvg(matrix, design, 512);
          expect(XMLValidator.validate(svg)).toBe(true);
          const texts: string[] = [];
          for (const [name, attributes, children] of walk(parser.parse(svg))) {
            if (name === "#text") continue;
            expect(ALLOWED_ELEMENTS).toContain(name);
            for (const [attribute, value] of Object.entries(attributes)) {
              expect(attribute.toLowerCase().startsWith("on")).toBe(false);
              if (/href$/i.test(attribute)) expect(value).toMatch(/^data:image\/(png|jpeg);base64,/);
              expect(value).not.toMatch(/url\(|javascript:/i);
            }
            if (name === "text")
              texts.push(children.map((c) => String((c as Record<string, unknown>)["#text"] ?? "")).join(""));
          }
          expect(texts).toHaveLength((top ? 1 : 0) + (bottom ? 1 : 0));
        },
      ),
      { numRuns: 300 },
    );
  });
});
