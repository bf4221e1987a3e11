import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import {
  CornerDotShape,
  CornerSquareShape,
  DesignSchema,
  ErrorCorrection,
  ErrorCorrectionSchema,
  FrameType,
  ModuleStyle,
  RenderingService,
  type Design,
} from "@qrplatform/api/rendering";
import { createLogger, errorInfoOf, inProcessTransport } from "@qrplatform/platform";
import { checkDesign, normalizeDesign, premiumFrameFields } from "../src/design/design-rules.js";
import { MAX_LOGO_BYTES, MAX_LOGO_SIDE_PIXELS } from "../src/design/logo-data-uri.js";
import { buildRendering } from "../src/server.js";
import {
  acceptedDesignTokens,
  canonicalToken,
  designEnums,
  designTokenAliases,
  designTokens,
  designValueOf,
  tokenOf,
  enumValueOf,
} from "@qrplatform/design";
import { credentials } from "@qrplatform/testing";
import { hugeBlankPng, pngChunk } from "@qrplatform/testing/huge-png";

type DesignInit = MessageInitShape<typeof DesignSchema>;

const design = (init: DesignInit = {}): Design => create(DesignSchema, init);

/** The problems of a design as "field reason" strings, for compact assertions. */
function problemsOf(init: DesignInit, content = ""): string[] {
  return checkDesign(design(init), content).problems.map((p) => `${p.field} ${p.reason}`);
}

/** A real 1x1 PNG: signature, IHDR, one IDAT row, IEND, each chunk with its CRC. */
function tinyPng(): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0); // width
  ihdr.writeUInt32BE(1, 4); // height
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, deflate, no filter, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", deflateSync(Buffer.from([0, 0x1a, 0x2b, 0x3c]))),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The start of a JFIF file: SOI, then an APP0 marker. */
const jpegBytes = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]);

const dataUri = (mediaType: string, bytes: Buffer) => `data:${mediaType};base64,${bytes.toString("base64")}`;

/** A PNG padded with trailing bytes to exactly `size` bytes. */
const pngOfSize = (size: number) => Buffer.concat([tinyPng(), Buffer.alloc(size - tinyPng().length, 7)]);

describe("defaults", () => {
  it("gives an unset corner dot the shape of its ring, so the finder patterns match", () => {
    const { design: normalized, problems } = checkDesign(
      design({ cornerSquareShape: CornerSquareShape.CIRCLE }),
      "https://s.qr.example/ab3k9mzq",
    );
    expect(problems).toEqual([]);
    expect(normalized.cornerDotShape).toBe(CornerDotShape.CIRCLE);
  });

  it("fills in every field of an absent or empty design", () => {
    const expected = {
      foreground: "#000000",
      background: "#ffffff",
      style: ModuleStyle.SQUARE,
      errorCorrection: ErrorCorrection.M,
      size: 1024,
      cornerSquareShape: CornerSquareShape.SQUARE,
      cornerDotShape: CornerDotShape.SQUARE,
      frame: {
        enabled: false,
        type: FrameType.SQUARE,
        color: "#000000",
        borderThickness: 8,
        labelTop: "",
        labelBottom: "",
      },
    };
    for (const input of [undefined, design()]) {
      const { design: normalized, problems } = normalizeDesign(input);
      expect(problems).toEqual([]);
      expect(normalized).toMatchObject(expected);
      expect(normalized.logo).toBeUndefined();
    }
  });

  it("defaults error correction to H when a logo is placed, but keeps a level that was given", () => {
    const logo = { dataUri: dataUri("image/png", tinyPng()) };
    const withLogo = normalizeDesign(design({ logo }));
    expect(withLogo.problems).toEqual([]);
    expect(withLogo.design.errorCorrection).toBe(ErrorCorrection.H);
    expect(withLogo.design.logo?.scale).toBe(0.2);
    expect(normalizeDesign(design({ logo, errorCorrection: ErrorCorrection.L })).design.errorCorrection).toBe(
      ErrorCorrection.L,
    );
  });

  it("keeps values that were given", () => {
    const given = {
      foreground: "#112233",
      background: "#fefefe",
      style: ModuleStyle.CLASSY_ROUNDED,
      errorCorrection: ErrorCorrection.Q,
      size: 2048,
      cornerSquareShape: CornerSquareShape.CIRCLE,
      cornerDotShape: CornerDotShape.ROUNDED,
      frame: {
        enabled: true,
        type: FrameType.ROUNDED,
        color: "#123456",
        borderThickness: 12,
        labelTop: "Scan",
        labelBottom: "me",
      },
    };
    const { design: normalized, problems } = normalizeDesign(design(given));
    expect(problems).toEqual([]);
    expect(normalized).toMatchObject(given);
  });
});

describe("colours", () => {
  it("accepts #rgb and #rrggbb in any case and stores lower-case #rrggbb", () => {
    const { design: normalized, problems } = normalizeDesign(
      design({ foreground: "#AbC", background: "#A1B2C3", frame: { color: "#0f0" } }),
    );
    expect(problems).toEqual([]);
    expect(normalized.foreground).toBe("#aabbcc");
    expect(normalized.background).toBe("#a1b2c3");
    expect(normalized.frame?.color).toBe("#00ff00");
  });

  it.each(["fff", "#ffff", "#12345", "#1234567", "#gggggg", " #ffffff", "#ffffff ", "red", "rgb(0,0,0)", "#"])(
    "refuses %j in every colour field",
    (color) => {
      expect(problemsOf({ foreground: color, background: color, frame: { color } })).toEqual([
        "design.foreground invalid_color",
        "design.background invalid_color",
        "design.frame.color invalid_color",
      ]);
    },
  );
});

describe("bounds", () => {
  it.each([
    [128, true],
    [4096, true],
    [127, false],
    [4097, false],
    [-1024, false],
  ])("size %d valid: %s", (size, valid) => {
    const { design: normalized, problems } = normalizeDesign(design({ size }));
    expect(problems.map((p) => `${p.field} ${p.reason}`)).toEqual(valid ? [] : ["size out_of_range"]);
    if (valid) expect(normalized.size).toBe(size);
  });

  it.each([
    [1, true],
    [40, true],
    [41, false],
    [-1, false],
  ])("frame border thickness %d valid: %s", (borderThickness, valid) => {
    const { design: normalized, problems } = normalizeDesign(design({ frame: { borderThickness } }));
    expect(problems.map((p) => `${p.field} ${p.reason}`)).toEqual(valid ? [] : ["frame.border_thickness out_of_range"]);
    if (valid) expect(normalized.frame?.borderThickness).toBe(borderThickness);
  });

  it.each([
    [0.1, true],
    [0.3, true],
    [0.15, true],
    [0.0999, false],
    [0.3001, false],
    [-0.2, false],
    [1, false],
    [Number.NaN, false],
  ])("logo scale %d valid: %s", (scale, valid) => {
    const { design: normalized, problems } = normalizeDesign(
      design({ logo: { dataUri: dataUri("image/png", tinyPng()), scale } }),
    );
    expect(problems.map((p) => `${p.field} ${p.reason}`)).toEqual(valid ? [] : ["logo.scale out_of_range"]);
    if (valid) expect(normalized.logo?.scale).toBe(scale);
  });

  it("allows labels of 30 characters after trimming, counting characters rather than UTF-16 units", () => {
    const thirty = "x".repeat(30);
    const emoji = "😀".repeat(30); // 60 UTF-16 units, 30 characters
    const { design: normalized, problems } = normalizeDesign(
      design({ frame: { labelTop: `  ${thirty}  `, labelBottom: emoji } }),
    );
    expect(problems).toEqual([]);
    expect(normalized.frame?.labelTop).toBe(thirty);
    expect(normalized.frame?.labelBottom).toBe(emoji);
  });

  it("refuses labels of 31 characters", () => {
    expect(problemsOf({ frame: { labelTop: "x".repeat(31), labelBottom: "😀".repeat(31) } })).toEqual([
      "design.frame.label_top too_long",
      "design.frame.label_bottom too_long",
    ]);
  });

  it.each(["Scan\nme", "tab\there", "bell\u0007", "del\u007f", "trailing\r\n"])(
    "refuses the control characters in %j",
    (label) => {
      expect(problemsOf({ frame: { labelTop: label } })).toEqual(["design.frame.label_top invalid_characters"]);
    },
  );

  it("trims labels, so a blank label is no label", () => {
    expect(normalizeDesign(design({ frame: { labelTop: "   ", labelBottom: " Hello " } })).design.frame).toMatchObject({
      labelTop: "",
      labelBottom: "Hello",
    });
  });

  it("refuses enum numbers the proto does not define", () => {
    expect(
      problemsOf({
        style: 99 as ModuleStyle,
        errorCorrection: 9 as ErrorCorrection,
        cornerSquareShape: 7 as CornerSquareShape,
        cornerDotShape: 7 as CornerDotShape,
        frame: { type: 8 as FrameType },
      }),
    ).toEqual([
      // The corner square is read first: an unset corner dot follows it.
      "design.corner_square_shape unknown_value",
      "design.style unknown_value",
      "design.error_correction unknown_value",
      "design.corner_dot_shape unknown_value",
      "design.frame.type unknown_value",
    ]);
  });
});

describe("tokens", () => {
  it("round-trips every value of every design enum through its token", () => {
    for (const schema of Object.values(designEnums)) {
      const values = schema.values.filter((v) => v.number !== 0);
      expect(values.length).toBeGreaterThan(0);
      for (const { number } of values) {
        const token = tokenOf(schema, number);
        expect(enumValueOf(schema, token)).toBe(number);
      }
    }
  });

  it("spells tokens as kebab case of the short name, and error-correction levels as upper-case letters", () => {
    for (const [field, schema] of Object.entries(designEnums)) {
      const tokens = schema.values.filter((v) => v.number !== 0).map((v) => tokenOf(schema, v.number));
      expect(designTokens[field as keyof typeof designTokens]).toEqual(tokens);
      for (const token of tokens)
        expect(token).toMatch(schema === ErrorCorrectionSchema ? /^[LMQH]$/ : /^[a-z]+(-[a-z]+)*$/);
    }
    expect(designTokens).toEqual({
      style: ["square", "dots", "rounded", "extra-rounded", "classy", "classy-rounded"],
      errorCorrection: ["L", "M", "Q", "H"],
      cornerSquareShape: ["square", "rounded", "circle"],
      cornerDotShape: ["square", "rounded", "circle"],
      "frame.type": ["square", "rounded", "circle"],
    });
    expect(tokenOf(designEnums.style, ModuleStyle.EXTRA_ROUNDED)).toBe("extra-rounded");
    expect(enumValueOf(designEnums.errorCorrection, "H")).toBe(ErrorCorrection.H);
  });

  it("has no token for UNSPECIFIED and no value for unknown or misspelled tokens", () => {
    expect(() => tokenOf(designEnums.style, ModuleStyle.UNSPECIFIED)).toThrow(RangeError);
    expect(() => tokenOf(designEnums.style, 42 as ModuleStyle)).toThrow(RangeError);
    for (const token of ["unspecified", "", "extra_rounded", "EXTRA_ROUNDED", "Square", "h", "MODULE_STYLE_DOTS"]) {
      expect(enumValueOf(designEnums.style, token)).toBeUndefined();
    }
    expect(enumValueOf(designEnums.errorCorrection, "h")).toBeUndefined();
  });

  it("accepts qr-code-styling's corner names as aliases of ours, and reads back ours", () => {
    expect(designValueOf("cornerSquareShape", "dot")).toBe(CornerSquareShape.CIRCLE);
    expect(designValueOf("cornerSquareShape", "extra-rounded")).toBe(CornerSquareShape.ROUNDED);
    expect(designValueOf("cornerDotShape", "dot")).toBe(CornerDotShape.CIRCLE);
    expect(designValueOf("cornerDotShape", "extra-rounded")).toBe(CornerDotShape.ROUNDED);
    expect(tokenOf(designEnums.cornerSquareShape, designValueOf("cornerSquareShape", "dot")!)).toBe("circle");
    expect(acceptedDesignTokens.cornerSquareShape).toEqual(["square", "rounded", "circle", "dot", "extra-rounded"]);
    expect(acceptedDesignTokens.cornerDotShape).toEqual(["square", "rounded", "circle", "dot", "extra-rounded"]);
    expect(acceptedDesignTokens.style).toEqual(designTokens.style);
    // Every alias names a canonical token of its field, and none hides one.
    for (const [field, aliases] of Object.entries(designTokenAliases)) {
      const canonical = designTokens[field as keyof typeof designTokens];
      for (const [alias, target] of Object.entries(aliases)) {
        expect(canonical).toContain(target);
        expect(canonical).not.toContain(alias);
      }
    }
    expect(canonicalToken("cornerSquareShape", "circle")).toBe("circle");
    // Aliases belong to their field: `dot` is no module style, and module-drawn corner names are unknown.
    expect(designValueOf("style", "dot")).toBeUndefined();
    for (const token of ["dots", "classy", "classy-rounded", "Dot", "toString", "__proto__"])
      expect(designValueOf("cornerSquareShape", token)).toBeUndefined();
  });
});

describe("logos", () => {
  it("accepts a real PNG and a JPEG, storing a canonical data URI", () => {
    const png = tinyPng();
    const accepted = normalizeDesign(design({ logo: { dataUri: `data:IMAGE/PNG;base64,${png.toString("base64")}` } }));
    expect(accepted.problems).toEqual([]);
    expect(accepted.design.logo?.dataUri).toBe(dataUri("image/png", png));
    expect(problemsOf({ logo: { dataUri: dataUri("image/jpeg", jpegBytes) } })).toEqual([]);
  });

  it("refuses bytes that are not of the declared type", () => {
    expect(problemsOf({ logo: { dataUri: dataUri("image/png", jpegBytes) } })).toEqual([
      "design.logo.data_uri invalid_logo",
    ]);
    expect(problemsOf({ logo: { dataUri: dataUri("image/jpeg", tinyPng()) } })).toEqual([
      "design.logo.data_uri invalid_logo",
    ]);
    const pngTextThenJpeg = Buffer.concat([Buffer.from("PNG"), jpegBytes]);
    expect(problemsOf({ logo: { dataUri: dataUri("image/png", pngTextThenJpeg) } })).toEqual([
      "design.logo.data_uri invalid_logo",
    ]);
  });

  it.each([
    ["an SVG", dataUri("image/svg+xml", Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>"))],
    ["a GIF", dataUri("image/gif", Buffer.from("GIF89a"))],
    ["a URL", "https://example.com/logo.png"],
    ["a data URI without base64", `data:image/png,${tinyPng().toString("latin1")}`],
    ["broken base64", `data:image/png;base64,${tinyPng().toString("base64").slice(0, -1)}`],
    ["base64 with other characters", `data:image/png;base64,${tinyPng().toString("base64")}!!!!`],
    ["a media type parameter", `data:image/png;charset=utf-8;base64,${tinyPng().toString("base64")}`],
  ])("refuses %s", (_, uri) => {
    expect(problemsOf({ logo: { dataUri: uri } })).toEqual(["design.logo.data_uri invalid_logo"]);
  });

  it("accepts 256 KiB and refuses one byte more", () => {
    expect(MAX_LOGO_BYTES).toBe(256 * 1024);
    expect(problemsOf({ logo: { dataUri: dataUri("image/png", pngOfSize(MAX_LOGO_BYTES)) } })).toEqual([]);
    expect(problemsOf({ logo: { dataUri: dataUri("image/png", pngOfSize(MAX_LOGO_BYTES + 1)) } })).toEqual([
      "design.logo.data_uri too_large",
    ]);
    expect(problemsOf({ logo: { dataUri: dataUri("image/png", pngOfSize(4 * MAX_LOGO_BYTES)) } })).toEqual([
      "design.logo.data_uri too_large",
    ]);
  });

  it("requires the image when a logo is given", () => {
    expect(problemsOf({ logo: { scale: 0.2 } })).toEqual(["design.logo.data_uri required"]);
  });
});

describe("premium frames", () => {
  const premium = (frame: DesignInit["frame"]) => premiumFrameFields(normalizeDesign(design({ frame })).design);

  it("asks for the add-on for a circle or a label on an enabled frame", () => {
    expect(premium({ enabled: true, type: FrameType.CIRCLE })).toEqual(["frame.type"]);
    expect(premium({ enabled: true, labelTop: "Scan me" })).toEqual(["frame.label_top"]);
    expect(premium({ enabled: true, type: FrameType.ROUNDED, labelBottom: "Menu" })).toEqual(["frame.label_bottom"]);
    expect(premium({ enabled: true, type: FrameType.CIRCLE, labelTop: "a", labelBottom: "b" })).toEqual([
      "frame.type",
      "frame.label_top",
      "frame.label_bottom",
    ]);
  });

  it("needs no add-on for plain frames, blank labels or a frame that is not drawn", () => {
    expect(premium(undefined)).toEqual([]);
    expect(premium({ enabled: true })).toEqual([]);
    expect(premium({ enabled: true, type: FrameType.ROUNDED, labelTop: "   " })).toEqual([]);
    expect(premium({ enabled: false, type: FrameType.CIRCLE, labelTop: "a", labelBottom: "b" })).toEqual([]);
  });

  it("reports premium fields in request spelling", () => {
    expect(checkDesign(design({ frame: { enabled: true, type: FrameType.CIRCLE } }), "").premiumFrameFields).toEqual([
      "design.frame.type",
    ]);
  });
});

describe("content capacity", () => {
  // Version 40, byte mode, from ISO/IEC 18004 table 7.
  it.each([
    [ErrorCorrection.L, 2953],
    [ErrorCorrection.M, 2331],
    [ErrorCorrection.Q, 1663],
    [ErrorCorrection.H, 1273],
  ])("level %d holds %d bytes and not one more", (errorCorrection, capacity) => {
    expect(problemsOf({ errorCorrection }, "a".repeat(capacity))).toEqual([]);
    const tooLong = checkDesign(design({ errorCorrection }), "a".repeat(capacity + 1)).problems;
    expect(tooLong.map((p) => `${p.field} ${p.reason}`)).toEqual(["content too_long"]);
    expect(tooLong[0]?.description).toContain(tokenOf(ErrorCorrectionSchema, errorCorrection));
  });

  it("counts UTF-8 bytes, not characters", () => {
    const twoByteCharacters = "é".repeat(1166); // 2332 bytes
    expect(problemsOf({}, twoByteCharacters)).toEqual(["content too_long"]);
    expect(problemsOf({}, twoByteCharacters.slice(1))).toEqual([]);
  });

  it("judges content at the level a logo implies", () => {
    const content = "a".repeat(1274);
    expect(problemsOf({}, content)).toEqual([]);
    expect(problemsOf({ logo: { dataUri: dataUri("image/png", tinyPng()) } }, content)).toEqual(["content too_long"]);
  });

  it("does not judge content against an invalid level, nor empty content", () => {
    expect(problemsOf({ errorCorrection: 9 as ErrorCorrection }, "a".repeat(5000))).toEqual([
      "design.error_correction unknown_value",
    ]);
    expect(problemsOf({ errorCorrection: ErrorCorrection.H }, "")).toEqual([]);
  });
});

describe("RenderingService over the service credential", () => {
  const logger = createLogger({ service: "test", level: "silent" });
  const clientWith = async (token: string) =>
    createClient(
      RenderingService,
      inProcessTransport({ modules: [await buildRendering()], credentials, logger, token }),
    );

  it("returns the normalized design and the premium fields", async () => {
    const rendering = await clientWith(credentials.serviceToken);
    const res = await rendering.validateDesign({
      design: { foreground: "#F00", frame: { enabled: true, labelTop: "  Scan me " } },
      content: "https://qr.example/abcdefgh",
    });
    expect(res.design).toMatchObject({
      foreground: "#ff0000",
      background: "#ffffff",
      errorCorrection: ErrorCorrection.M,
      size: 1024,
      frame: { enabled: true, type: FrameType.SQUARE, labelTop: "Scan me", borderThickness: 8 },
    });
    expect(res.premiumFrameFields).toEqual(["design.frame.label_top"]);

    const plain = await rendering.validateDesign({});
    expect(plain.design?.style).toBe(ModuleStyle.SQUARE);
    expect(plain.premiumFrameFields).toEqual([]);
  });

  it("fails with INVALID_ARGUMENT naming every invalid field", async () => {
    const rendering = await clientWith(credentials.serviceToken);
    const error = ConnectError.from(
      await rendering
        .validateDesign({
          design: {
            background: "white",
            size: 64,
            frame: { labelBottom: "x".repeat(31) },
            logo: { dataUri: dataUri("image/png", jpegBytes) },
          },
          content: "a".repeat(3000),
        })
        .catch((e) => e),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    const info = errorInfoOf(error);
    expect(info?.reason).toBe("validation_error");
    expect(info?.fieldViolations.map((v) => [v.field, v.reason])).toEqual([
      ["design.background", "invalid_color"],
      ["design.size", "out_of_range"],
      ["design.frame.label_bottom", "too_long"],
      ["design.logo.data_uri", "invalid_logo"],
      ["content", "too_long"],
    ]);
    expect(info?.fieldViolations.every((v) => v.description.length > 0)).toBe(true);
  });

  it("accepts the corner pairs decoders read and refuses the others, naming the dot that fits", async () => {
    const rendering = await clientWith(credentials.serviceToken);
    const content = "https://qr.example/abcdefgh";
    const accepted = await rendering.validateDesign({
      design: { cornerSquareShape: CornerSquareShape.ROUNDED, cornerDotShape: CornerDotShape.ROUNDED },
      content,
    });
    expect(accepted.design).toMatchObject({
      cornerSquareShape: CornerSquareShape.ROUNDED,
      cornerDotShape: CornerDotShape.ROUNDED,
    });
    expect(
      (await rendering.renderQrCode({ content, size: 128, design: accepted.design })).image.length,
    ).toBeGreaterThan(0);

    // The scannability matrix found every unlike pair misread, a rounded ring around a round dot included.
    for (const [ring, dot, fits] of [
      [CornerSquareShape.ROUNDED, CornerDotShape.CIRCLE, "rounded"],
      [CornerSquareShape.ROUNDED, CornerDotShape.SQUARE, "rounded"],
      [CornerSquareShape.CIRCLE, CornerDotShape.SQUARE, "circle"],
    ] as const) {
      const refused = ConnectError.from(
        await rendering
          .validateDesign({ design: { cornerSquareShape: ring, cornerDotShape: dot }, content })
          .catch((e) => e),
      );
      expect(refused.code).toBe(Code.InvalidArgument);
      const violations = errorInfoOf(refused)?.fieldViolations ?? [];
      expect(violations.map((v) => [v.field, v.reason])).toEqual([
        ["design.corner_dot_shape", "mismatched_corner_shapes"],
      ]);
      expect(violations[0]?.description).toContain(`must be ${fits} with a`);
    }
  });

  it("renders for a caller with the service credential and refuses callers without one", async () => {
    const rendering = await clientWith(credentials.serviceToken);
    const rendered = await rendering.renderQrCode({ content: "x", size: 128 });
    expect(rendered.contentType).toBe("image/png");
    expect(rendered.image.length).toBeGreaterThan(0);

    const stranger = await clientWith("not-a-credential");
    const refused = ConnectError.from(await stranger.validateDesign({}).catch((e) => e));
    expect(refused.code).toBe(Code.Unauthenticated);
    const refusedRender = ConnectError.from(await stranger.renderQrCode({ content: "x" }).catch((e) => e));
    expect(refusedRender.code).toBe(Code.Unauthenticated);
  });
});

describe("logos by the pixels they decode to", () => {
  const logger = createLogger({ service: "test", level: "silent" });
  const client = async () =>
    createClient(
      RenderingService,
      inProcessTransport({ modules: [await buildRendering()], credentials, logger, token: credentials.serviceToken }),
    );
  const fieldsOf = async (promise: Promise<unknown>) => {
    const error = ConnectError.from(
      await promise.then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    return errorInfoOf(error)?.fieldViolations.map((v) => [v.field, v.reason]);
  };

  it("refuses a small file of 40000x40000 pixels in ValidateDesign and RenderQrCode, and still takes a normal logo", async () => {
    const bomb = await hugeBlankPng(40000, 40000);
    // Well under the file-size limit: only its pixels give it away.
    expect(bomb.length).toBeLessThan(MAX_LOGO_BYTES);
    const logo = { dataUri: dataUri("image/png", bomb) };
    const rendering = await client();
    expect(
      await fieldsOf(rendering.validateDesign({ design: { logo }, content: "https://qr.example.com/ab3k9mzq" })),
    ).toEqual([["design.logo.data_uri", "logo_too_many_pixels"]]);
    // A design stored before the bound is refused before it is drawn.
    expect(
      await fieldsOf(
        rendering.renderQrCode({ content: "https://qr.example.com/ab3k9mzq", design: { logo }, size: 128 }),
      ),
    ).toEqual([["design.logo.data_uri", "logo_too_many_pixels"]]);

    const normal = { dataUri: dataUri("image/png", tinyPng()) };
    const { design } = await rendering.validateDesign({
      design: { logo: normal },
      content: "https://qr.example.com/ab3k9mzq",
    });
    expect(design?.logo?.dataUri).toBe(normal.dataUri);
    expect(
      (await rendering.renderQrCode({ content: "https://qr.example.com/ab3k9mzq", design, size: 128 })).image.length,
    ).toBeGreaterThan(0);
  });

  it(`takes ${MAX_LOGO_SIDE_PIXELS} pixels on each side and refuses one more on either`, async () => {
    const rendering = await client();
    const check = async (width: number, height: number) =>
      rendering.validateDesign({
        design: { logo: { dataUri: dataUri("image/png", await hugeBlankPng(width, height)) } },
      });
    await check(MAX_LOGO_SIDE_PIXELS, MAX_LOGO_SIDE_PIXELS);
    for (const [width, height] of [
      [MAX_LOGO_SIDE_PIXELS + 1, 1],
      [1, MAX_LOGO_SIDE_PIXELS + 1],
    ] as const) {
      expect(await fieldsOf(check(width, height))).toEqual([["design.logo.data_uri", "logo_too_many_pixels"]]);
    }
  });

  it("refuses bytes with the right signature that do not read as an image", async () => {
    const rendering = await client();
    const truncated = tinyPng().subarray(0, 20);
    expect(
      await fieldsOf(rendering.validateDesign({ design: { logo: { dataUri: dataUri("image/png", truncated) } } })),
    ).toEqual([["design.logo.data_uri", "invalid_logo"]]);
  });
});

describe("logos given by URL", () => {
  const logger = createLogger({ service: "test", level: "silent" });

  it("are fetched once by ValidateDesign, which answers the image inline and keeps the URL", async () => {
    const png = tinyPng();
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      res.writeHead(200, { "content-type": "image/png" }).end(png);
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    try {
      const { port } = server.address() as AddressInfo;
      // Our loopback server stands in for a public host; the real policy refuses loopback.
      const module = await buildRendering({ logoFetch: { isAllowedAddress: (address) => address === "127.0.0.1" } });
      const rendering = createClient(
        RenderingService,
        inProcessTransport({ modules: [module], credentials, logger, token: credentials.serviceToken }),
      );
      const url = `http://127.0.0.1:${port}/logo.png`;
      const { design } = await rendering.validateDesign({ design: { logo: { url } } });
      expect(design?.logo).toMatchObject({
        url,
        dataUri: `data:image/png;base64,${png.toString("base64")}`,
        scale: 0.2,
      });
      // The normalized design carries its image, so checking it again fetches nothing.
      await rendering.validateDesign({ design, content: "https://qr.example.com/ab3k9mzq" });
      expect(requests).toBe(1);

      const refused = ConnectError.from(
        await (await clientWith(credentials.serviceToken))
          .validateDesign({ design: { logo: { url } } })
          .catch((e) => e),
      );
      expect(errorInfoOf(refused)?.fieldViolations.map((v) => [v.field, v.reason])).toEqual([
        ["design.logo.url", "forbidden_address"],
      ]);
      expect(requests).toBe(1);
    } finally {
      await new Promise((done) => server.close(done));
    }
  });

  const clientWith = async (token: string) =>
    createClient(
      RenderingService,
      inProcessTransport({ modules: [await buildRendering()], credentials, logger, token }),
    );

  it("refuses a fetched logo by its pixels, on the URL the client gave", async () => {
    const bomb = await hugeBlankPng(40000, 40000);
    const server = createServer((_req, res) => res.writeHead(200, { "content-type": "image/png" }).end(bomb));
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    try {
      const { port } = server.address() as AddressInfo;
      const module = await buildRendering({ logoFetch: { isAllowedAddress: (address) => address === "127.0.0.1" } });
      const rendering = createClient(
        RenderingService,
        inProcessTransport({ modules: [module], credentials, logger, token: credentials.serviceToken }),
      );
      const refused = ConnectError.from(
        await rendering
          .validateDesign({ design: { logo: { url: `http://127.0.0.1:${port}/logo.png` } } })
          .catch((e) => e),
      );
      expect(errorInfoOf(refused)?.fieldViolations.map((v) => [v.field, v.reason])).toEqual([
        ["design.logo.url", "logo_too_many_pixels"],
      ]);
    } finally {
      await new Promise((done) => server.close(done));
    }
  });

  it("must be http(s) URLs of at most 2048 characters", () => {
    expect(problemsOf({ logo: { url: `https://example.com/${"a".repeat(2048)}` } })).toEqual([
      "design.logo.url too_long",
    ]);
    expect(problemsOf({ logo: {} })).toEqual(["design.logo.data_uri required"]);
  });
});
