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
  type Frame,
  type Logo,
} from "@qrplatform/api/rendering";
import { INVALID_CHARACTERS, textProblem, type FieldProblem } from "@qrplatform/platform";
import { tokenOf } from "./design-tokens.js";
import { isLogoProblem, readLogoDataUri } from "./logo-data-uri.js";
import { byteCapacity, contentBytes } from "./qr-capacity.js";
import { colourProblems, cornerProblems, logoProblems, MATCHING_CORNER_DOT } from "./scannability.js";

/** The bounds of the design's numbers and texts, inclusive. */
export const DESIGN_LIMITS = {
  size: { min: 128, max: 4096 },
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
  size: 1024,
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

/**
 * Checks a design against the vocabulary and fills in every default. Paths in the problems are in proto
 * spelling relative to the design, such as "frame.label_top". The design is only meaningful when there
 * are no problems.
 */
export function normalizeDesign(input: Design | undefined): NormalizedDesign {
  const given = input ?? create(DesignSchema);
  const problems: FieldProblem[] = [];
  const cornerSquareShape = enumOf(CornerSquareShapeSchema, given.cornerSquareShape, DESIGN_DEFAULTS.cornerSquareShape, "corner_square_shape", problems);
  const design = create(DesignSchema, {
    foreground: colorOf(given.foreground, DESIGN_DEFAULTS.foreground, "foreground", problems),
    background: colorOf(given.background, DESIGN_DEFAULTS.background, "background", problems),
    style: enumOf(ModuleStyleSchema, given.style, DESIGN_DEFAULTS.style, "style", problems),
    errorCorrection: enumOf(
      ErrorCorrectionSchema,
      given.errorCorrection,
      given.logo ? DESIGN_DEFAULTS.errorCorrectionWithLogo : DESIGN_DEFAULTS.errorCorrection,
      "error_correction",
      problems,
    ),
    size: integerOf(given.size, DESIGN_DEFAULTS.size, DESIGN_LIMITS.size, "size", problems),
    cornerSquareShape,
    cornerDotShape: enumOf(CornerDotShapeSchema, given.cornerDotShape, MATCHING_CORNER_DOT[cornerSquareShape], "corner_dot_shape", problems),
    frame: normalizeFrame(given.frame ?? create(FrameSchema), problems),
    logo: given.logo && normalizeLogo(given.logo, problems),
  });
  return { design, problems };
}

function normalizeFrame(frame: Frame, problems: FieldProblem[]): Frame {
  return create(FrameSchema, {
    enabled: frame.enabled,
    type: enumOf(FrameTypeSchema, frame.type, DESIGN_DEFAULTS.frameType, "frame.type", problems),
    color: colorOf(frame.color, DESIGN_DEFAULTS.frameColor, "frame.color", problems),
    borderThickness: integerOf(frame.borderThickness, DESIGN_DEFAULTS.borderThickness, DESIGN_LIMITS.borderThickness, "frame.border_thickness", problems),
    labelTop: labelOf(frame.labelTop, "frame.label_top", problems),
    labelBottom: labelOf(frame.labelBottom, "frame.label_bottom", problems),
  });
}

function normalizeLogo(logo: Logo, problems: FieldProblem[]): Logo {
  const { min, max } = DESIGN_LIMITS.logoScale;
  let scale: number = DESIGN_DEFAULTS.logoScale;
  if (logo.scale !== 0) {
    if (logo.scale >= min && logo.scale <= max) scale = logo.scale;
    else problems.push({ field: "logo.scale", reason: "out_of_range", description: `must be from ${min} to ${max}` });
  }
  let dataUri = "";
  if (logo.url.length > MAX_LOGO_URL_LENGTH) {
    problems.push({ field: "logo.url", reason: "too_long", description: `must be at most ${MAX_LOGO_URL_LENGTH} characters` });
  }
  if (logo.dataUri === "" && logo.url === "") {
    problems.push({ field: "logo.data_uri", reason: "required", description: "or logo.url is required when a logo is given" });
  } else if (logo.dataUri !== "") {
    const image = readLogoDataUri(logo.dataUri);
    if (isLogoProblem(image)) problems.push({ field: "logo.data_uri", ...image });
    else dataUri = image.dataUri;
  }
  return create(LogoSchema, { dataUri, scale, url: logo.url });
}

function colorOf(value: string, fallback: string, field: string, problems: FieldProblem[]): string {
  if (value === "") return fallback;
  if (!HEX_COLOR.test(value)) {
    problems.push({ field, reason: "invalid_color", description: "must be a hex colour such as #1a2b3c or #fff" });
    return fallback;
  }
  const hex = value.slice(1).toLowerCase();
  return hex.length === 3 ? `#${[...hex].map((c) => c + c).join("")}` : `#${hex}`;
}

function enumOf<E extends number>(schema: DescEnum, value: E, fallback: E, field: string, problems: FieldProblem[]): E {
  if (value === 0) return fallback;
  if (schema.values.some((v) => v.number === value)) return value;
  problems.push({ field, reason: "unknown_value", description: `${value} is not a value of ${schema.typeName}` });
  return fallback;
}

function integerOf(value: number, fallback: number, range: { min: number; max: number }, field: string, problems: FieldProblem[]): number {
  if (value === 0) return fallback;
  if (Number.isInteger(value) && value >= range.min && value <= range.max) return value;
  problems.push({ field, reason: "out_of_range", description: `must be from ${range.min} to ${range.max}` });
  return fallback;
}

function labelOf(value: string, field: string, problems: FieldProblem[]): string {
  const problem = textProblem(value);
  if (problem) {
    problems.push({ field, reason: INVALID_CHARACTERS, description: problem });
    return "";
  }
  const label = value.trim();
  if ([...label].length > DESIGN_LIMITS.labelCharacters) {
    problems.push({ field, reason: "too_long", description: `must be at most ${DESIGN_LIMITS.labelCharacters} characters` });
    return "";
  }
  return label;
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
  const tooLong = content !== "" && !invalid("error_correction") ? contentProblem(content, design.errorCorrection) : undefined;
  if (!tooLong && !invalid("error_correction") && !invalid("logo")) problems.push(...logoProblems(design, content));
  const inRequest = (field: string) => `design.${field}`;
  const all = problems.map((p) => ({ ...p, field: inRequest(p.field) }));
  if (tooLong) all.push(tooLong);
  return { design, problems: all, premiumFrameFields: premiumFrameFields(design).map(inRequest) };
}
