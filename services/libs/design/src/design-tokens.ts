import type { DescEnum } from "@bufbuild/protobuf";
import type { GenEnum } from "@bufbuild/protobuf/codegenv2";
import {
  CornerDotShapeSchema,
  CornerSquareShapeSchema,
  ErrorCorrectionSchema,
  FrameTypeSchema,
  ModuleStyleSchema,
} from "@qrplatform/api/rendering";

/**
 * The design's enums, keyed by the public JSON path of the field that holds them. The REST edge maps
 * JSON to proto with these instead of its own lists, so a value added to the proto appears in the API.
 */
export const designEnums = {
  style: ModuleStyleSchema,
  errorCorrection: ErrorCorrectionSchema,
  cornerSquareShape: CornerSquareShapeSchema,
  cornerDotShape: CornerDotShapeSchema,
  "frame.type": FrameTypeSchema,
} as const;

/** The public JSON path of a design field that holds an enum. */
export type DesignEnumField = keyof typeof designEnums;

/** Error-correction levels keep the standard's upper-case letters; every other token is kebab case. */
const UPPER_CASE_TOKENS: ReadonlySet<DescEnum> = new Set([ErrorCorrectionSchema]);

function tokenOfName(schema: DescEnum, localName: string): string {
  return UPPER_CASE_TOKENS.has(schema) ? localName.toUpperCase() : localName.toLowerCase().replaceAll("_", "-");
}

/**
 * The public token of a design enum value: its short name in kebab case (MODULE_STYLE_EXTRA_ROUNDED ->
 * "extra-rounded"), or the upper-case letter for error correction (ERROR_CORRECTION_H -> "H").
 * Throws a RangeError for UNSPECIFIED and unknown numbers: a normalized design never holds them.
 */
export function tokenOf(schema: DescEnum, value: number): string {
  const found = schema.values.find((v) => v.number === value && v.number !== 0);
  if (!found) throw new RangeError(`${value} has no public token in ${schema.typeName}`);
  return tokenOfName(schema, found.localName);
}

/** The enum value for a public token (exact spelling), or undefined when the token names no value. */
export function enumValueOf<E extends number>(schema: GenEnum<E>, token: string): E | undefined;
export function enumValueOf(schema: DescEnum, token: string): number | undefined;
export function enumValueOf(schema: DescEnum, token: string): number | undefined {
  return schema.values.find((v) => v.number !== 0 && tokenOfName(schema, v.localName) === token)?.number;
}

/** Every public token of an enum, UNSPECIFIED excluded, in declaration order. */
export function tokensOf(schema: DescEnum): string[] {
  return schema.values.filter((v) => v.number !== 0).map((v) => tokenOfName(schema, v.localName));
}

/** The canonical tokens of each design enum field: what a design reads back with, and the OpenAPI document's lists. */
export const designTokens: { readonly [F in DesignEnumField]: readonly string[] } = {
  style: tokensOf(ModuleStyleSchema),
  errorCorrection: tokensOf(ErrorCorrectionSchema),
  cornerSquareShape: tokensOf(CornerSquareShapeSchema),
  cornerDotShape: tokensOf(CornerDotShapeSchema),
  "frame.type": tokensOf(FrameTypeSchema),
};

/**
 * Other names a request may use for a token, mapped to our canonical one. They are the names of
 * qr-code-styling (npm `qr-code-styling`), the styling library most QR tools build on, for the same
 * shapes: its corner square `dot` is our circle ring and its `extra-rounded` our rounded ring, its
 * corner dot `dot` our circle dot and (in newer versions) `extra-rounded` our rounded dot. Its other
 * corner names (`dots`, `classy`, `classy-rounded`) draw the pattern module by module, which we do not,
 * so they stay unknown. This is the one home of aliases: the edge and every reader of tokens use it.
 */
export const designTokenAliases: { readonly [F in DesignEnumField]?: Readonly<Record<string, string>> } = {
  cornerSquareShape: { dot: "circle", "extra-rounded": "rounded" },
  cornerDotShape: { dot: "circle", "extra-rounded": "rounded" },
};

/** Every token a request may give for each design enum field: the canonical ones, then the aliases. */
export const acceptedDesignTokens = Object.fromEntries(
  Object.entries(designTokens).map(([field, tokens]) => [
    field,
    [...tokens, ...Object.keys(designTokenAliases[field as DesignEnumField] ?? {})],
  ]),
) as unknown as { readonly [F in DesignEnumField]: readonly string[] };

/** The canonical token a request's token stands for: itself, or what its alias maps to. */
export function canonicalToken(field: DesignEnumField, token: string): string {
  const aliases = designTokenAliases[field];
  // Own keys only: a token such as "toString" is no alias.
  return aliases && Object.hasOwn(aliases, token) ? aliases[token]! : token;
}

/** The enum value of a design field's token, canonical or alias; undefined when the token names no value. */
export function designValueOf(field: DesignEnumField, token: string): number | undefined {
  return enumValueOf(designEnums[field], canonicalToken(field, token));
}
