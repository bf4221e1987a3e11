import { FrameType, type Design } from "@qrplatform/api/rendering";

/** The light margin every scanner needs around the symbol, in modules (ISO/IEC 18004 asks for four). */
export const QUIET_ZONE_MODULES = 4;

/** Share of the canvas each label band takes on square and rounded frames. */
const LABEL_BAND = 0.11;
/** Average advance of a DejaVu Sans Bold glyph, in em, used to shrink long labels until they fit. */
const GLYPH_ADVANCE_EM = 0.68;

export interface Box {
  readonly x: number;
  readonly y: number;
  readonly side: number;
}

export interface LabelPlacement {
  readonly text: string;
  /** Centre of the baseline. */
  readonly x: number;
  readonly baseline: number;
  readonly fontSize: number;
}

/**
 * Where everything goes, in design units: the canvas is design.size wide and tall, and an export at
 * another size scales the whole composition, so a frame or label keeps its proportions at every size.
 */
export interface Layout {
  readonly canvas: number;
  /** The symbol with its quiet zone. */
  readonly code: Box;
  readonly moduleSize: number;
  /** The symbol's first module. */
  readonly origin: { readonly x: number; readonly y: number };
  readonly labels: readonly LabelPlacement[];
}

/**
 * Lays a symbol of `modules` modules per side out on the design's canvas, inside its frame when it has
 * one, for an image `outputSize` pixels wide. Modules are a whole number of output pixels and start on
 * a pixel boundary, so square edges are sharp instead of anti-aliased grey, which decoders misread as
 * a shifted edge; the few pixels left over widen the quiet zone.
 */
export function layOut(design: Design, modules: number, outputSize: number): Layout {
  const canvas = design.size;
  const frame = design.frame?.enabled ? design.frame : undefined;
  let code: Box;
  const labels: LabelPlacement[] = [];
  if (!frame) {
    code = { x: 0, y: 0, side: canvas };
  } else if (frame.type === FrameType.CIRCLE) {
    // The code with its quiet zone is inscribed in the ring; labels sit in the caps above and below it.
    const inner = canvas / 2 - frame.borderThickness;
    const side = inner * Math.SQRT2;
    code = { x: (canvas - side) / 2, y: (canvas - side) / 2, side };
    const cap = inner - side / 2;
    const fontSize = cap * 0.45;
    const offset = cap * 0.42;
    // The text's far edge must fit the chord of the ring at that height, which narrows towards the rim.
    const farEdge = side / 2 + offset + fontSize / 2;
    const chord = 2 * Math.sqrt(inner * inner - farEdge * farEdge) * 0.9;
    if (frame.labelTop) labels.push(label(frame.labelTop, canvas / 2, code.y - offset, fontSize, chord));
    if (frame.labelBottom) labels.push(label(frame.labelBottom, canvas / 2, code.y + side + offset, fontSize, chord));
  } else {
    const border = frame.borderThickness;
    const band = canvas * LABEL_BAND;
    const top = border + (frame.labelTop ? band : 0);
    const bottom = border + (frame.labelBottom ? band : 0);
    const side = Math.min(canvas - 2 * border, canvas - top - bottom);
    code = { x: (canvas - side) / 2, y: top + (canvas - top - bottom - side) / 2, side };
    const width = canvas - 2 * border - band * 0.4;
    if (frame.labelTop) labels.push(label(frame.labelTop, canvas / 2, border + band / 2, band * 0.6, width));
    if (frame.labelBottom)
      labels.push(label(frame.labelBottom, canvas / 2, canvas - border - band / 2, band * 0.6, width));
  }
  const pixelsPerUnit = outputSize / canvas;
  const modulePixels = Math.max(1, Math.floor((code.side * pixelsPerUnit) / (modules + 2 * QUIET_ZONE_MODULES)));
  const symbolPixels = modulePixels * modules;
  const snap = (start: number) =>
    Math.round((start + code.side / 2) * pixelsPerUnit - symbolPixels / 2) / pixelsPerUnit;
  return {
    canvas,
    code,
    moduleSize: modulePixels / pixelsPerUnit,
    origin: { x: snap(code.x), y: snap(code.y) },
    labels,
  };
}

function label(text: string, x: number, middle: number, fontSize: number, maxWidth: number): LabelPlacement {
  const fitted = Math.min(fontSize, maxWidth / (GLYPH_ADVANCE_EM * [...text].length));
  // A capital's visual middle sits about 0.36 em above the baseline.
  return { text, x, baseline: middle + fitted * 0.36, fontSize: fitted };
}

/** The modules (rows and columns first..last) cleared behind a centred logo, and the logo's own box, in modules. */
export interface LogoArea {
  readonly first: number;
  readonly last: number;
  readonly box: Box;
}

/** Gap kept between the logo and the nearest module, in modules, so the logo reads as separate. */
const LOGO_PADDING_MODULES = 0.5;

/** The logo is `scale` of the symbol's width (quiet zone excluded), centred. */
export function logoArea(modules: number, scale: number): LogoArea {
  const side = modules * scale;
  const start = (modules - side) / 2;
  return {
    first: Math.max(0, Math.floor(start - LOGO_PADDING_MODULES)),
    last: Math.min(modules - 1, Math.ceil(start + side + LOGO_PADDING_MODULES) - 1),
    box: { x: start, y: start, side },
  };
}
