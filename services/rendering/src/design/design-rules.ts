import { create, type DescEnum } from "@bufbuild/protobuf";
import {
  CornerSquareShapeSchema,
  CornerDotShapeSchema,
  CornerSquareShape,
  DesignSchema,
  ErrorCorrection,
  ErrorCorrectionSchema,
  FrameSchema,
  FrameType,
  FrameTypeSchema,
  LogoSchema,
  ModuleStyle,
  ModuleStyleSchema,
  type Design,
} from "@qrplatform/api/rendering";
import { z } from "zod";
import { checkedBy, fieldProblemsOf, textRuleProblem, type FieldProblem, type RuleProblem } from "@qrplatform/platform";
import { EXPORT_SIZE, tokenOf } from "@qrplatform/design";
import { isLogoProblem, readLogoDataUri, type LogoImage } from "./logo-data-uri.js";
import { byteCapacity, contentBytes } from "./qr-capacity.js";
import { colourProblems, cornerProblems, logoProblems, MATCHING_CORNER_DOT } from "./scannability.js";

/** The bounds of the design's numbers and texts, inclusive. */
export const DESIGN_LIMITS = {
  size: { min: EXPORT_SIZE.min, max: EXPORT_SIZE.max },
  borderThickness: { min: 1, max: 40 },
  logoScale: { min: 0.1, max: 0.3 },
  labelCharacters: 30,
} as const;

export const MAX_LOGO_URL_LENGTH = 2048;

/** What an unset field becomes. */
export const DESIGN_DEFAULTS = {
  foreground: "#000000",
  background: "#ffffff",
  style: ModuleStyle.SQUARE,
  errorCorrection: ErrorCorrection.M,
  /** A logo hides modules, so a design with one gets the level that recovers the most. */
  errorCorrectionWithLogo: ErrorCorrection.H,
  size: EXPORT_SIZE.default,
  cornerSquareShape: CornerSquareShape.SQUARE,
  frameType: FrameType.SQUARE,
  frameColor: "#000000",
  borderThickness: 8,
  logoScale: 0.2,
} as const;

const HEX_COLOR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

/** A design with every default filled in, and the problems found on the way (paths relative to the design). */
export interface NormalizedDesign {
  readonly design: Design;
  readonly problems: FieldProblem[];
}

// The design's vocabulary, declared field by field like every request schema. Zero values are proto3's
// "not set" and always pass: they get the defaults. The rules are checked on the given values; the
// normalization (defaults, canonical colours, trimmed labels) is applied by designWithDefaults.

function colorProblem(value: string): RuleProblem | undefined {
  if (value === "" || HEX_COLOR.test(value)) return undefined;
  return { reason: "invalid_color", description: "must be a hex colour such as #1a2b3c or #fff" };
}

function labelProblem(value: string): RuleProblem | undefined {
  const problem = textRuleProblem(value);
  if (problem) return problem;
  if ([...value.trim()].length > DESIGN_LIMITS.labelCharacters) {
    return { reason: "too_long", description: `must be at most ${DESIGN_LIMITS.labelCharacters} characters` };
  }
  return undefined;
}

const color = z.string().superRefine(checkedBy(colorProblem));
const label = z.string().superRefine(checkedBy(labelProblem));

/** A proto enum field: unset, or one of the enum's values. */
const enumValue = (schema: DescEnum) =>
  z
    .number()
    .superRefine(
      checkedBy((value: number) =>
        value === 0 || schema.values.some((v) => v.number === value)
          ? undefined
          : { reason: "unknown_value", description: `${value} is not a value of ${schema.typeName}` },
      ),
    );

/** A number field: unset, or within the range. Any number, NaN included, so a NaN is out of range like any other. */
const numberIn = (range: { readonly min: number; readonly max: number }, integer: boolean) =>
  z
    .custom<number>()
    .superRefine(
      checkedBy((value: number) =>
        value === 0 || ((!integer || Number.isInteger(value)) && value >= range.min && value <= range.max)
          ? undefined
          : { reason: "out_of_range", description: `must be from ${range.min} to ${range.max}` },
      ),
    );

const frameSchema = z.object({
  type: enumValue(FrameTypeSchema),
  color,
  borderThickness: numberIn(DESIGN_LIMITS.borderThickness, true),
  labelTop: label,
  labelBottom: label,
});

const logoSchema = z
  .object({
    scale: numberIn(DESIGN_LIMITS.logoScale, false),
    url: z
      .string()
      .superRefine(
        checkedBy((url: string) =>
          url.length > MAX_LOGO_URL_LENGTH
            ? { reason: "too_long", description: `must be at most ${MAX_LOGO_URL_LENGTH} characters` }
            : undefined,
        ),
      ),
    dataUri: z.string().superRefine(
      checkedBy((dataUri: string) => {
        if (dataUri === "") return undefined;
        const image = readLogoDataUri(dataUri);
        return isLogoProblem(image) ? image : undefined;
      }),
    ),
  })
  .superRefine((logo, ctx) => {
    if (logo.dataUri === "" && logo.url === "") {
      ctx.addIssue({
        code: "custom",
        path: ["dataUri"],
        message: "or logo.url is required when a logo is given",
        params: { reason: "required" },
      });
    }
  });

/** The design's fields, the corner square first: an unset corner dot follows it. */
const designSchema = z.object({
  cornerSquareShape: enumValue(CornerSquareShapeSchema),
  foreground: color,
  background: color,
  style: enumValue(ModuleStyleSchema),
  errorCorrection: enumValue(ErrorCorrectionSchema),
  size: numberIn(DESIGN_LIMITS.size, true),
  cornerDotShape: enumValue(CornerDotShapeSchema),
  frame: frameSchema.optional(),
  logo: logoSchema.optional(),
});

/**
 * Checks a design against the vocabulary and fills in every default. Paths in the problems are in proto
 * spelling relative to the design, such as "frame.label_top". The design is only meaningful when there
 * are no problems (an invalid field gets its default).
 */
export function normalizeDesign(input: Design | undefined): NormalizedDesign {
  const given = input ?? create(DesignSchema);
  const checked = designSchema.safeParse(given);
  const problems = checked.success ? [] : fieldProblemsOf(checked.error);
  const invalid = new Set(problems.map((p) => p.field));
  return { design: designWithDefaults(given, (field) => !invalid.has(field)), problems };
}

/** The design with every unset or invalid field at its default, colours in #rrggbb and labels trimmed. */
function designWithDefaults(given: Design, valid: (field: string) => boolean): Design {
  const pick = <T extends number>(value: T, field: string, fallback: T): T =>
    value !== 0 && valid(field) ? value : fallback;
  const colorOf = (value: string, field: string, fallback: string) =>
    value !== "" && valid(field) ? canonicalColor(value) : fallback;
  const cornerSquareShape = pick(given.cornerSquareShape, "corner_square_shape", DESIGN_DEFAULTS.cornerSquareShape);
  const frame = given.frame ?? create(FrameSchema);
  const logo = given.logo;
  return create(DesignSchema, {
    foreground: colorOf(given.foreground, "foreground", DESIGN_DEFAULTS.foreground),
    background: colorOf(given.background, "background", DESIGN_DEFAULTS.background),
    style: pick(given.style, "style", DESIGN_DEFAULTS.style),
    errorCorrection: pick(
      given.errorCorrection,
      "error_correction",
      logo ? DESIGN_DEFAULTS.errorCorrectionWithLogo : DESIGN_DEFAULTS.errorCorrection,
    ),
    size: pick(given.size, "size", DESIGN_DEFAULTS.size),
    cornerSquareShape,
    cornerDotShape: pick(given.cornerDotShape, "corner_dot_shape", MATCHING_CORNER_DOT[cornerSquareShape]),
    frame: create(FrameSchema, {
      enabled: frame.enabled,
      type: pick(frame.type, "frame.type", DESIGN_DEFAULTS.frameType),
      color: colorOf(frame.color, "frame.color", DESIGN_DEFAULTS.frameColor),
      borderThickness: pick(frame.borderThickness, "frame.border_thickness", DESIGN_DEFAULTS.borderThickness),
      labelTop: valid("frame.label_top") ? frame.labelTop.trim() : "",
      labelBottom: valid("frame.label_bottom") ? frame.labelBottom.trim() : "",
    }),
    logo:
      logo &&
      create(LogoSchema, {
        dataUri:
          logo.dataUri !== "" && valid("logo.data_uri") ? (readLogoDataUri(logo.dataUri) as LogoImage).dataUri : "",
        scale: pick(logo.scale, "logo.scale", DESIGN_DEFAULTS.logoScale),
        url: logo.url,
      }),
  });
}

/** A checked colour as stored: lower-case #rrggbb. */
function canonicalColor(value: string): string {
  const hex = value.slice(1).toLowerCase();
  return hex.length === 3 ? `#${[...hex].map((c) => c + c).join("")}` : `#${hex}`;
}

/**
 * The fields of a normalized design that need the premium frames add-on (paths relative to the design):
 * a circle frame, and each non-empty label, on a frame that is drawn.
 */
export function premiumFrameFields(design: Design): string[] {
  const frame = design.frame;
  if (!frame?.enabled) return [];
  return [
    ...(frame.type === FrameType.CIRCLE ? ["frame.type"] : []),
    ...(frame.labelTop !== "" ? ["frame.label_top"] : []),
    ...(frame.labelBottom !== "" ? ["frame.label_bottom"] : []),
  ];
}

/** The problem with the content a code is to encode at a level, if it does not fit. */
export function contentProblem(content: string, level: ErrorCorrection): FieldProblem | undefined {
  if (level === ErrorCorrection.UNSPECIFIED) return undefined;
  const bytes = contentBytes(content);
  const capacity = byteCapacity(level);
  if (bytes <= capacity) return undefined;
  return {
    field: "content",
    reason: "too_long",
    description: `is ${bytes} bytes; a QR code at error correction ${tokenOf(ErrorCorrectionSchema, level)} holds at most ${capacity}`,
  };
}

/** The outcome of checking a ValidateDesign request, with paths relative to the request ("design.frame.type"). */
export interface DesignCheck {
  readonly design: Design;
  readonly problems: FieldProblem[];
  readonly premiumFrameFields: string[];
}

/**
 * Checks a design and the content it will encode: the vocabulary, whether the colours scan, and, when
 * the content is given, whether it fits and whether the logo leaves enough of the code to recover. The
 * content is judged at the design's normalized error-correction level, so not when that level is itself
 * invalid; empty content is not judged, so a design can be checked before its link exists.
 */
export function checkDesign(input: Design | undefined, content: string): DesignCheck {
  const { design, problems } = normalizeDesign(input);
  const invalid = (field: string) => problems.some((p) => p.field === field || p.field.startsWith(`${field}.`));
  if (!invalid("foreground") && !invalid("background")) problems.push(...colourProblems(design));
  if (!invalid("corner_square_shape") && !invalid("corner_dot_shape")) problems.push(...cornerProblems(design));
  const tooLong =
    content !== "" && !invalid("error_correction") ? contentProblem(content, design.errorCorrection) : undefined;
  if (!tooLong && !invalid("error_correction") && !invalid("logo")) problems.push(...logoProblems(design, content));
  const inRequest = (field: string) => `design.${field}`;
  const all = problems.map((p) => ({ ...p, field: inRequest(p.field) }));
  if (tooLong) all.push(tooLong);
  return { design, problems: all, premiumFrameFields: premiumFrameFields(design).map(inRequest) };
}
