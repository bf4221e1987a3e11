import {
  CornerDotShape,
  CornerDotShapeSchema,
  CornerSquareShape,
  CornerSquareShapeSchema,
  ErrorCorrectionSchema,
  type Design,
} from "@qrplatform/api/rendering";
import type { FieldProblem } from "@qrplatform/platform";
import { tokenOf } from "@qrplatform/design";
import { logoArea } from "../render/layout.js";
import { encodeQr, type Level } from "../render/qr-matrix.js";

/**
 * The least contrast between modules and background we accept, as a WCAG 2 contrast ratio: the
 * success criterion for graphics that must be told apart (1.4.11). Below it, phone cameras in poor
 * light stop separating dark from light modules.
 */
export const MIN_CONTRAST_RATIO = 3;

/**
 * The share of a Reed-Solomon block's correction a logo may use. The rest is kept for what a printed
 * code meets in the world: smudges, glare, folds and a camera's blur.
 */
export const LOGO_CORRECTION_BUDGET = 0.75;

/** The corner dot of each corner-square shape: the one drawn when the dot is not set. */
export const MATCHING_CORNER_DOT: Record<CornerSquareShape, CornerDotShape> = {
  [CornerSquareShape.UNSPECIFIED]: CornerDotShape.UNSPECIFIED,
  [CornerSquareShape.SQUARE]: CornerDotShape.SQUARE,
  [CornerSquareShape.ROUNDED]: CornerDotShape.ROUNDED,
  [CornerSquareShape.CIRCLE]: CornerDotShape.CIRCLE,
};

/**
 * The corner dots decoders read inside each corner square, as the scannability matrix measured them
 * (services/rendering/test/scannability-matrix.test.ts: every pair with every module style and level
 * at 128, 256 and 320 px, and with frames, labels and logos at 320 px, read by zbarimg and jsQR).
 * Decoders find a code by its finder patterns' 1:1:3:1:1 proportions, measured across and diagonally;
 * a dot of another shape than its ring changes the diagonal ones, and every such pair was misread at
 * some size or with some frame. The matrix test fails when a pair here stops decoding, or when a pair
 * left out is no longer misread where it was, so the table moves with the renderer.
 */
export const READABLE_CORNER_DOTS: Record<CornerSquareShape, readonly CornerDotShape[]> = {
  [CornerSquareShape.UNSPECIFIED]: [],
  [CornerSquareShape.SQUARE]: [CornerDotShape.SQUARE],
  [CornerSquareShape.ROUNDED]: [CornerDotShape.ROUNDED],
  [CornerSquareShape.CIRCLE]: [CornerDotShape.CIRCLE],
};

/** Whether decoders read a code whose corner squares hold corner dots of this shape. */
export function cornerPairReadable(ring: CornerSquareShape, dot: CornerDotShape): boolean {
  return READABLE_CORNER_DOTS[ring].includes(dot);
}

/** The problem with a normalized design's corner dot, when decoders misread it inside its corner square. */
export function cornerProblems(design: Design): FieldProblem[] {
  if (cornerPairReadable(design.cornerSquareShape, design.cornerDotShape)) return [];
  const readable = READABLE_CORNER_DOTS[design.cornerSquareShape]
    .map((dot) => tokenOf(CornerDotShapeSchema, dot))
    .join(" or ");
  return [
    {
      field: "corner_dot_shape",
      reason: "mismatched_corner_shapes",
      description: `must be ${readable} with a ${tokenOf(CornerSquareShapeSchema, design.cornerSquareShape)} corner square: scanners locate a code by these patterns' proportions, and common decoders misread this pair`,
    },
  ];
}

/** Problems that would make a normalized design print a code that does not scan, with paths relative to the design. */
export function colourProblems(design: Design): FieldProblem[] {
  const fg = relativeLuminance(design.foreground);
  const bg = relativeLuminance(design.background);
  const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
  if (fg > bg) {
    return [
      {
        field: "foreground",
        reason: "inverted_colors",
        description: "must be darker than the background: many scanners cannot read light modules on a dark background",
      },
    ];
  }
  if (ratio < MIN_CONTRAST_RATIO) {
    return [
      {
        field: "foreground",
        reason: "low_contrast",
        description: `has a contrast of ${ratio.toFixed(2)}:1 with the background; at least ${MIN_CONTRAST_RATIO}:1 is needed to scan reliably`,
      },
    ];
  }
  return [];
}

/**
 * Whether the modules hidden behind the logo can be recovered: we find every codeword the cleared area
 * touches, count them per Reed-Solomon block, and compare with what each block corrects. Function
 * patterns (alignment, timing, version information) cannot be recovered at all, so a logo may not hide
 * any. The answer depends on the content, whose length picks the symbol's version.
 */
export function logoProblems(design: Design, content: string): FieldProblem[] {
  if (!design.logo || content === "") return [];
  const matrix = encodeQr(content, design.errorCorrection as Level);
  const area = logoArea(matrix.size, design.logo.scale);
  const hidden = new Set<number>();
  let hiddenFunctionModules = 0;
  for (let row = area.first; row <= area.last; row++) {
    for (let col = area.first; col <= area.last; col++) {
      if (matrix.isFunction(row, col)) hiddenFunctionModules++;
      const codeword = matrix.codewordOf(row, col);
      if (codeword >= 0) hidden.add(codeword);
    }
  }
  if (hiddenFunctionModules > 0) {
    return [
      {
        field: "logo",
        reason: "logo_hides_pattern",
        description: `would hide an alignment pattern of this version-${matrix.version} code; a shorter link or a lower error correction gives a smaller code without one in the centre`,
      },
    ];
  }
  const perBlock = matrix.blocks.map(() => 0);
  for (const codeword of hidden) perBlock[matrix.codewordBlocks[codeword]!]!++;
  const worst = Math.max(...perBlock.map((n, i) => n / matrix.blocks[i]!.correctable));
  if (worst <= LOGO_CORRECTION_BUDGET) return [];
  const block = perBlock.findIndex((n, i) => n / matrix.blocks[i]!.correctable === worst);
  return [
    {
      field: "logo.scale",
      reason: "logo_too_large",
      description:
        `hides ${perBlock[block]} codewords of a block that corrects ${matrix.blocks[block]!.correctable} at error correction ` +
        `${tokenOf(ErrorCorrectionSchema, matrix.level)}; we allow ${Math.round(LOGO_CORRECTION_BUDGET * 100)}% ` +
        `so the code survives real-world damage. Use a smaller scale or a higher error correction`,
    },
  ];
}

/** WCAG 2 relative luminance of a "#rrggbb" colour. */
function relativeLuminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const channel = parseInt(hex.slice(i, i + 2), 16) / 255;
    return channel <= 0.04045 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}
