// The scannability matrix: every module style x corner square x corner dot x frame (with and without
// labels) x logo x error-correction level, in PNG, JPEG and SVG, read back by decoders that are not ours.
// Designs the creation rules refuse are asserted refused instead; everything accepted must decode.
// Every corner square x corner dot pair is also read at several sizes: the pairs the rules accept must
// decode at every one, and each pair they refuse must still be misread somewhere, so a renderer change
// that breaks a pair, or makes a refused one readable, fails here.
// Nothing here touches a database or Redis (it is in vitest.config.ts's STORAGE_FREE), so CI runs it
// once, in the embedded pass.
import { describe, expect, it } from "vitest";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import sharp from "sharp";
import pLimit from "p-limit";
import {
  CornerDotShapeSchema,
  CornerSquareShapeSchema,
  DesignSchema,
  ErrorCorrection,
  ErrorCorrectionSchema,
  FrameType,
  FrameTypeSchema,
  ImageFormat,
  ModuleStyleSchema,
  RenderQrCodeRequestSchema,
} from "@qrplatform/api/rendering";
import { designTokens, enumValueOf } from "@qrplatform/design";
import { checkDesign } from "../src/design/design-rules.js";
import { cornerPairReadable, READABLE_CORNER_DOTS } from "../src/design/scannability.js";
import { Renderer } from "../src/render/renderer.js";
import { jsqrDecode, rsvgToPng, zbarDecode } from "@qrplatform/testing/decoders";

/** A vanity URL of the length codes on the default short domain have. */
const CONTENT = "https://qr.example.com/ab3k9mzq";
/** Small enough to keep the matrix fast, large enough that a module is several pixels even inside a circle frame. */
const SIZE = 320;
/**
 * The sizes every accepted corner pair is read at without a frame: modules of about 3 to 9 px, what a
 * phone camera sees of a print. Beyond them zbarimg misreads some circle rings of any dot (ADR 7), a
 * limit of its line fitting.
 */
const CORNER_SIZES = [128, 256, 320];

const logoPng = await sharp({ create: { width: 96, height: 96, channels: 4, background: "#e53935" } })
  .composite([{ input: Buffer.from('<svg width="96" height="96"><circle cx="48" cy="48" r="30" fill="#fff"/></svg>') }])
  .png()
  .toBuffer();
const LOGO = { dataUri: `data:image/png;base64,${logoPng.toString("base64")}` };

type DesignInit = MessageInitShape<typeof DesignSchema>;
interface Case {
  readonly name: string;
  readonly design: DesignInit;
  /** The image width; SIZE when not given. */
  readonly size?: number;
}

const FRAMES: { name: string; frame?: DesignInit["frame"] }[] = [
  { name: "no frame" },
  ...designTokens["frame.type"].flatMap((type) => [
    { name: `${type} frame`, frame: { enabled: true, type: enumValueOf(FrameTypeSchema, type)!, color: "#37474f" } },
    {
      name: `${type} frame with labels`,
      frame: {
        enabled: true,
        type: enumValueOf(FrameTypeSchema, type)!,
        color: "#37474f",
        labelTop: "SCAN ME",
        labelBottom: "Menu & prices <today>",
      },
    },
  ]),
];

function casesFor(style: string): Case[] {
  const cases: Case[] = [];
  for (const square of designTokens.cornerSquareShape)
    for (const dot of designTokens.cornerDotShape)
      for (const { name: frameName, frame } of FRAMES)
        for (const withLogo of [false, true])
          for (const level of designTokens.errorCorrection)
            cases.push({
              name: `${style} / corner ${square} / dot ${dot} / ${frameName} / ${withLogo ? "logo" : "no logo"} / ${level}`,
              design: {
                foreground: "#1a237e",
                style: enumValueOf(ModuleStyleSchema, style)!,
                cornerSquareShape: enumValueOf(CornerSquareShapeSchema, square)!,
                cornerDotShape: enumValueOf(CornerDotShapeSchema, dot)!,
                errorCorrection: enumValueOf(ErrorCorrectionSchema, level)!,
                frame,
                logo: withLogo ? LOGO : undefined,
              },
            });
  return cases;
}

/** A labelled frame, where jsQR misreads some corner pairs it reads without one. */
const LABELLED_SQUARE_FRAME = {
  enabled: true,
  type: FrameType.SQUARE,
  color: "#37474f",
  labelTop: "SCAN ME",
  labelBottom: "Menu & prices <today>",
};

/**
 * For each refused corner pair (ring/dot), one design this matrix found misread at a tested size: with
 * no frame at 128, 256 or 320 px, or with a labelled frame at 320 px, where jsQR misreads a rounded
 * ring around a square dot, and a circle ring around a rounded dot, in every style.
 */
const REFUSED_PAIR_WITNESSES: Record<string, { size: number; design: DesignInit }> = {
  "square/rounded": {
    size: 256,
    design: { style: enumValueOf(ModuleStyleSchema, "dots")!, errorCorrection: ErrorCorrection.M },
  },
  "square/circle": {
    size: 320,
    design: { style: enumValueOf(ModuleStyleSchema, "square")!, errorCorrection: ErrorCorrection.H },
  },
  "rounded/square": {
    size: SIZE,
    design: { errorCorrection: ErrorCorrection.M, frame: LABELLED_SQUARE_FRAME },
  },
  "rounded/circle": {
    size: 256,
    design: { style: enumValueOf(ModuleStyleSchema, "dots")!, errorCorrection: ErrorCorrection.M },
  },
  "circle/square": {
    size: 320,
    design: { style: enumValueOf(ModuleStyleSchema, "square")!, errorCorrection: ErrorCorrection.H },
  },
  "circle/rounded": { size: SIZE, design: { errorCorrection: ErrorCorrection.H, frame: LABELLED_SQUARE_FRAME } },
};

// A batch of hundreds of renders at once, not a tenant: nothing is refused for waiting.
const renderer = new Renderer({ queuedPerAccount: Number.POSITIVE_INFINITY });
const subprocesses = pLimit(4);

/** Renders one accepted case in all three formats and reads each back; returns what failed. */
async function decodeFailures(cases: Case[]): Promise<string[]> {
  const images = await Promise.all(
    cases.map(async ({ design, size = SIZE }) => {
      const render = (format: ImageFormat) =>
        renderer.render(create(RenderQrCodeRequestSchema, { content: CONTENT, design, format, size }));
      const [png, jpg, svg] = await Promise.all([
        render(ImageFormat.PNG),
        render(ImageFormat.JPG),
        render(ImageFormat.SVG),
      ]);
      const svgRaster = await subprocesses(() => rsvgToPng(Buffer.from(svg.image)));
      return { png: Buffer.from(png.image), jpg: Buffer.from(jpg.image), svgRaster };
    }),
  );
  const [zbarPng, zbarJpg, zbarSvg] = await Promise.all([
    zbarDecode(
      images.map((i) => i.png),
      "png",
    ),
    zbarDecode(
      images.map((i) => i.jpg),
      "jpg",
    ),
    zbarDecode(
      images.map((i) => i.svgRaster),
      "png",
    ),
  ]);
  const failures: string[] = [];
  for (const [i, { name }] of cases.entries()) {
    const image = images[i]!;
    const readings = {
      "png/zbar": zbarPng[i],
      "jpg/zbar": zbarJpg[i],
      "svg/rsvg/zbar": zbarSvg[i],
      "png/jsqr": await jsqrDecode(image.png),
      "jpg/jsqr": await jsqrDecode(image.jpg),
      "svg/rsvg/jsqr": await jsqrDecode(image.svgRaster),
    };
    for (const [how, text] of Object.entries(readings))
      if (text !== CONTENT) failures.push(`${name}: ${how} read ${JSON.stringify(text)}`);
  }
  return failures;
}

describe("scannability matrix", () => {
  it.each(designTokens.style)(
    "every %s design the rules accept decodes in png, jpg and svg; the rest are refused",
    async (style) => {
      const accepted: Case[] = [];
      for (const c of casesFor(style)) {
        const reasons = checkDesign(create(DesignSchema, c.design), CONTENT)
          .problems.map((p) => p.reason)
          .sort();
        // The rules refuse a corner pair decoders misread, and a logo at L or M (at this link's length).
        const expected = [
          ...(c.design.logo && [ErrorCorrection.L, ErrorCorrection.M].includes(c.design.errorCorrection!)
            ? ["logo_too_large"]
            : []),
          ...(cornerPairReadable(c.design.cornerSquareShape!, c.design.cornerDotShape!)
            ? []
            : ["mismatched_corner_shapes"]),
        ].sort();
        expect(reasons, c.name).toEqual(expected);
        if (reasons.length === 0) accepted.push(c);
      }
      const readablePairs = Object.values(READABLE_CORNER_DOTS).flat().length;
      expect(accepted.length).toBe(readablePairs * FRAMES.length * (4 + 2));

      expect(await decodeFailures(accepted)).toEqual([]);
    },
    600_000,
  );

  it("reads every corner pair the rules accept at every size, and still misreads each pair they refuse", async () => {
    const pairs = designTokens.cornerSquareShape.flatMap((square) =>
      designTokens.cornerDotShape.map((dot) => `${square}/${dot}`),
    );
    const readable = (pair: string) => {
      const [square, dot] = pair.split("/") as [string, string];
      return cornerPairReadable(enumValueOf(CornerSquareShapeSchema, square)!, enumValueOf(CornerDotShapeSchema, dot)!);
    };
    const shapes = (pair: string) => {
      const [square, dot] = pair.split("/") as [string, string];
      return {
        cornerSquareShape: enumValueOf(CornerSquareShapeSchema, square)!,
        cornerDotShape: enumValueOf(CornerDotShapeSchema, dot)!,
      };
    };
    // Every pair the rules refuse has a witness: a design the decoders misread, found by running this
    // matrix over every pair. A pair the renderer learns to draw readably loses its witness here.
    expect(Object.keys(REFUSED_PAIR_WITNESSES).sort()).toEqual(pairs.filter((p) => !readable(p)).sort());

    const cases: Case[] = [];
    for (const pair of pairs.filter(readable))
      for (const style of designTokens.style)
        for (const level of designTokens.errorCorrection)
          for (const size of CORNER_SIZES)
            cases.push({
              name: `${style} / corner ${pair} / ${level} / ${size} px`,
              size,
              design: {
                foreground: "#1a237e",
                style: enumValueOf(ModuleStyleSchema, style)!,
                errorCorrection: enumValueOf(ErrorCorrectionSchema, level)!,
                ...shapes(pair),
              },
            });
    const witnesses = Object.entries(REFUSED_PAIR_WITNESSES).map(([pair, { size, design }]) => ({
      name: `witness ${pair}`,
      size,
      design: { foreground: "#1a237e", ...design, ...shapes(pair) },
    }));
    const [readableFailures, witnessFailures] = await Promise.all([decodeFailures(cases), decodeFailures(witnesses)]);
    expect(readableFailures).toEqual([]);
    for (const { name } of witnesses)
      expect(
        witnessFailures.some((f) => f.startsWith(`${name}:`)),
        `${name} now decodes`,
      ).toBe(true);
  }, 600_000);

  it("decodes a logo at the largest scale the rules accept, at every level that takes one", async () => {
    const edge: Case[] = [];
    for (const level of [ErrorCorrection.L, ErrorCorrection.M, ErrorCorrection.Q, ErrorCorrection.H]) {
      let largest: number | undefined;
      for (let scale = 0.1; scale <= 0.3 + 1e-9; scale += 0.01) {
        const design = { errorCorrection: level, logo: { ...LOGO, scale: Math.round(scale * 100) / 100 } };
        if (checkDesign(create(DesignSchema, design), CONTENT).problems.length === 0) largest = design.logo.scale;
      }
      if (largest !== undefined)
        edge.push({
          name: `level ${level} scale ${largest}`,
          design: { errorCorrection: level, logo: { ...LOGO, scale: largest } },
        });
    }
    expect(edge.map((c) => c.name)).toContain(`level ${ErrorCorrection.H} scale 0.3`);
    expect(await decodeFailures(edge)).toEqual([]);
  }, 120_000);

  it("uses a frame of every type the proto defines", () => {
    const defined = FrameTypeSchema.values.map((v) => v.number).filter((n) => n !== FrameType.UNSPECIFIED);
    expect(new Set(FRAMES.filter((f) => f.frame).map((f) => f.frame!.type))).toEqual(new Set(defined));
  });
});
