import { create } from "@bufbuild/protobuf";
import { z } from "zod";
import { textSchema } from "@qrplatform/platform";
import { DesignSchema, type Design } from "@qrplatform/api/rendering";
import { acceptedDesignTokens, designEnums, designValueOf, tokenOf, type DesignEnumField } from "@qrplatform/design";

// The design as the API shows it: camelCase keys (the contract's), enum tokens from the rendering
// service's vocabulary. The edge checks shape and tokens; rendering checks values and fills defaults.
// A request may use qr-code-styling's names beside ours (rendering's aliases); reads give ours.

const token = (field: DesignEnumField) => z.enum(acceptedDesignTokens[field] as [string, ...string[]]).optional();

/**
 * An integer the proto's int32 can carry. Rendering checks the design's own bounds; a number beyond
 * int32 would fail the proto conversion instead, so it is refused here as the field's problem.
 */
const int32 = () => z.int32({ error: "must be a 32-bit integer" }).optional();

const frameBody = z.strictObject({
  enabled: z.boolean().optional(),
  type: token("frame.type"),
  color: textSchema().optional(),
  borderThickness: int32(),
  labelTop: textSchema().optional(),
  labelBottom: textSchema().optional(),
});

const logoBody = z
  .strictObject({
    dataUri: textSchema().optional(),
    url: textSchema().optional(),
    scale: z.number().optional(),
  })
  .refine((logo) => (logo.dataUri === undefined) !== (logo.url === undefined), {
    message: "give exactly one of dataUri and url",
    path: ["dataUri"],
  });

/** The `design` object of a create request. */
export const designBody = z.strictObject({
  foreground: textSchema().optional(),
  background: textSchema().optional(),
  style: token("style"),
  errorCorrection: token("errorCorrection"),
  size: int32(),
  cornerSquareShape: token("cornerSquareShape"),
  cornerDotShape: token("cornerDotShape"),
  frame: frameBody.optional(),
  logo: logoBody.nullish(),
});

export type DesignBody = z.infer<typeof designBody>;

/** The enum value of a checked token, canonical or alias. */
function enumOf(field: DesignEnumField, token: string | undefined): number | undefined {
  return token === undefined ? undefined : designValueOf(field, token);
}

/** A create request's design as the proto Design; absent fields stay unset so rendering applies defaults. */
export function designFromBody(body: DesignBody | undefined): Design | undefined {
  if (!body) return undefined;
  return create(DesignSchema, {
    foreground: body.foreground,
    background: body.background,
    style: enumOf("style", body.style),
    errorCorrection: enumOf("errorCorrection", body.errorCorrection),
    size: body.size,
    cornerSquareShape: enumOf("cornerSquareShape", body.cornerSquareShape),
    cornerDotShape: enumOf("cornerDotShape", body.cornerDotShape),
    frame: body.frame && {
      enabled: body.frame.enabled,
      type: enumOf("frame.type", body.frame.type),
      color: body.frame.color,
      borderThickness: body.frame.borderThickness,
      labelTop: body.frame.labelTop,
      labelBottom: body.frame.labelBottom,
    },
    logo: body.logo ? { dataUri: body.logo.dataUri, url: body.logo.url, scale: body.logo.scale } : undefined,
  });
}

/** The media type of a data URI, such as "image/png". */
function mediaTypeOf(dataUri: string): string {
  return /^data:([^;,]+)/.exec(dataUri)?.[1] ?? "application/octet-stream";
}

/**
 * A stored (normalized) design as the API shows it. The logo's bytes are not echoed: they can be a
 * quarter of a megabyte, and lists would carry them for every code.
 */
export function designJson(design: Design) {
  const frame = design.frame!;
  return {
    foreground: design.foreground,
    background: design.background,
    style: tokenOf(designEnums.style, design.style),
    errorCorrection: tokenOf(designEnums.errorCorrection, design.errorCorrection),
    size: design.size,
    cornerSquareShape: tokenOf(designEnums.cornerSquareShape, design.cornerSquareShape),
    cornerDotShape: tokenOf(designEnums.cornerDotShape, design.cornerDotShape),
    frame: {
      enabled: frame.enabled,
      type: tokenOf(designEnums["frame.type"], frame.type),
      color: frame.color,
      borderThickness: frame.borderThickness,
      labelTop: frame.labelTop,
      labelBottom: frame.labelBottom,
    },
    logo: design.logo?.dataUri
      ? {
          mediaType: mediaTypeOf(design.logo.dataUri),
          byteLength: Buffer.from(design.logo.dataUri.slice(design.logo.dataUri.indexOf(",") + 1), "base64").length,
          scale: design.logo.scale,
          url: design.logo.url || null,
        }
      : null,
  };
}
