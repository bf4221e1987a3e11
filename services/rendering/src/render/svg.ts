import { CornerDotShape, CornerSquareShape, FrameType, ModuleStyle, type Design } from "@qrplatform/api/rendering";
import { layOut, logoArea, type Layout, type LogoArea } from "./layout.js";
import type { QrMatrix } from "./qr-matrix.js";

/** The font labels are set in; the rasterizer is given this exact file, so every platform draws the same glyphs. */
export const LABEL_FONT_FAMILY = "DejaVu Sans";

/**
 * Draws a QR symbol as SVG in the design's style. The result is self-contained: no script, no event
 * handlers, no external references (a logo is embedded as the data URI the design holds). Every
 * number is formatted here, colours must already be normalized "#rrggbb", and text is escaped.
 */
export function renderSvg(matrix: QrMatrix, design: Design, outputSize: number): string {
  const layout = layOut(design, matrix.size, outputSize);
  const logo = design.logo ? logoArea(matrix.size, design.logo.scale) : undefined;
  const { origin, moduleSize } = layout;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1"`,
    ` width="${num(outputSize)}" height="${num(outputSize)}" viewBox="0 0 ${num(layout.canvas)} ${num(layout.canvas)}">`,
    `<rect width="${num(layout.canvas)}" height="${num(layout.canvas)}" fill="${color(design.background)}"/>`,
    frameSvg(design, layout),
    `<g transform="translate(${num(origin.x)} ${num(origin.y)}) scale(${num(moduleSize)})" fill="${color(design.foreground)}">`,
    `<path d="${dataModulesPath(matrix, design.style, logo)}"/>`,
    finderPatternsSvg(matrix.size, design.cornerSquareShape, design.cornerDotShape),
    alignmentPatternsSvg(matrix.alignmentCentres),
    `</g>`,
    logo && design.logo ? logoSvg(design.logo.dataUri, logo, layout) : "",
    `</svg>`,
  ];
  return parts.join("");
}

/** Finder patterns are 7x7 in three corners; they are drawn whole in their own shapes, not module by module. */
const FINDER = 7;

function finderOrigins(size: number): [number, number][] {
  return [
    [0, 0],
    [size - FINDER, 0],
    [0, size - FINDER],
  ];
}

function inFinder(size: number, row: number, col: number): boolean {
  return (row < FINDER && (col < FINDER || col >= size - FINDER)) || (row >= size - FINDER && col < FINDER);
}

function inAlignment(centres: QrMatrix["alignmentCentres"], row: number, col: number): boolean {
  return centres.some(([r, c]) => Math.abs(row - r) <= 2 && Math.abs(col - c) <= 2);
}

/** Corner radii of one module: top-left, top-right, bottom-right, bottom-left, in modules. */
type Radii = [number, number, number, number];

/**
 * Radii for a module whose corners are exposed or not; a corner is exposed when neither neighbour on its
 * two sides is drawn, so rounding it never opens a gap between touching modules.
 */
const STYLE_RADII: Record<Exclude<ModuleStyle, ModuleStyle.UNSPECIFIED | ModuleStyle.DOTS>, Radii> = {
  [ModuleStyle.SQUARE]: [0, 0, 0, 0],
  [ModuleStyle.ROUNDED]: [0.3, 0.3, 0.3, 0.3],
  [ModuleStyle.EXTRA_ROUNDED]: [0.5, 0.5, 0.5, 0.5],
  [ModuleStyle.CLASSY]: [0.5, 0, 0.5, 0],
  [ModuleStyle.CLASSY_ROUNDED]: [0.5, 0.2, 0.5, 0.2],
};

const DOT_RADIUS = 0.45;

function dataModulesPath(matrix: QrMatrix, style: ModuleStyle, logo: LogoArea | undefined): string {
  const { size } = matrix;
  const cleared = (row: number, col: number) =>
    logo !== undefined && row >= logo.first && row <= logo.last && col >= logo.first && col <= logo.last;
  const drawn = (row: number, col: number) =>
    row >= 0 &&
    col >= 0 &&
    row < size &&
    col < size &&
    matrix.isDark(row, col) &&
    !inFinder(size, row, col) &&
    !inAlignment(matrix.alignmentCentres, row, col) &&
    !cleared(row, col);
  const radii = style === ModuleStyle.DOTS || style === ModuleStyle.UNSPECIFIED ? undefined : STYLE_RADII[style];
  const d: string[] = [];
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      if (!drawn(row, col)) continue;
      if (style === ModuleStyle.DOTS) {
        d.push(circlePath(col + 0.5, row + 0.5, DOT_RADIUS));
        continue;
      }
      const up = drawn(row - 1, col);
      const down = drawn(row + 1, col);
      const left = drawn(row, col - 1);
      const right = drawn(row, col + 1);
      const [tl, tr, br, bl] = radii ?? [0, 0, 0, 0];
      d.push(
        rectPath(col, row, 1, 1, [
          up || left ? 0 : tl,
          up || right ? 0 : tr,
          down || right ? 0 : br,
          down || left ? 0 : bl,
        ]),
      );
    }
  }
  return d.join("");
}

function finderPatternsSvg(size: number, ring: CornerSquareShape, dot: CornerDotShape): string {
  const rings: string[] = [];
  const dots: string[] = [];
  for (const [x, y] of finderOrigins(size)) {
    if (ring === CornerSquareShape.CIRCLE) {
      rings.push(circlePath(x + 3.5, y + 3.5, 3.5), circlePath(x + 3.5, y + 3.5, 2.5));
    } else {
      const [outer, inner] = ring === CornerSquareShape.ROUNDED ? [2, 1.2] : [0, 0];
      rings.push(rectPath(x, y, 7, 7, corners(outer)), rectPath(x + 1, y + 1, 5, 5, corners(inner)));
    }
    if (dot === CornerDotShape.CIRCLE) dots.push(circlePath(x + 3.5, y + 3.5, 1.5));
    else dots.push(rectPath(x + 2, y + 2, 3, 3, corners(dot === CornerDotShape.ROUNDED ? 0.9 : 0)));
  }
  return `<path fill-rule="evenodd" d="${rings.join("")}"/><path d="${dots.join("")}"/>`;
}

/**
 * Alignment patterns are drawn whole and square, whatever the module style: decoders search for their
 * 1:1:1 rings to correct perspective, and a ring of dots has gaps they cannot follow.
 */
function alignmentPatternsSvg(centres: QrMatrix["alignmentCentres"]): string {
  if (centres.length === 0) return "";
  const d = centres.map(
    ([row, col]) =>
      rectPath(col - 2, row - 2, 5, 5, corners(0)) +
      rectPath(col - 1, row - 1, 3, 3, corners(0)) +
      rectPath(col, row, 1, 1, corners(0)),
  );
  return `<path fill-rule="evenodd" d="${d.join("")}"/>`;
}

function frameSvg(design: Design, layout: Layout): string {
  const frame = design.frame;
  if (!frame?.enabled) return "";
  const s = layout.canvas;
  const t = frame.borderThickness;
  let ring: string;
  if (frame.type === FrameType.CIRCLE) {
    ring = circlePath(s / 2, s / 2, s / 2) + circlePath(s / 2, s / 2, s / 2 - t);
  } else {
    const r = frame.type === FrameType.ROUNDED ? s * 0.06 : 0;
    ring = rectPath(0, 0, s, s, corners(r)) + rectPath(t, t, s - 2 * t, s - 2 * t, corners(Math.max(0, r - t)));
  }
  const fill = color(frame.color);
  const labels = layout.labels.map(
    (l) =>
      `<text x="${num(l.x)}" y="${num(l.baseline)}" font-family="${LABEL_FONT_FAMILY}" font-weight="bold" ` +
      `font-size="${num(l.fontSize)}" text-anchor="middle" fill="${fill}">${escapeText(l.text)}</text>`,
  );
  return `<path fill="${fill}" fill-rule="evenodd" d="${ring}"/>${labels.join("")}`;
}

function logoSvg(dataUri: string, area: LogoArea, layout: Layout): string {
  if (!/^data:image\/(?:png|jpeg);base64,[A-Za-z0-9+/]*={0,2}$/.test(dataUri)) {
    throw new Error("a logo must be a normalized PNG or JPEG data URI");
  }
  const { origin, moduleSize } = layout;
  const { x, y, side } = area.box;
  return (
    `<image x="${num(origin.x + x * moduleSize)}" y="${num(origin.y + y * moduleSize)}" ` +
    `width="${num(side * moduleSize)}" height="${num(side * moduleSize)}" preserveAspectRatio="xMidYMid meet" ` +
    `xlink:href="${dataUri}"/>`
  );
}

function corners(r: number): Radii {
  return [r, r, r, r];
}

/** A clockwise rectangle with its own radius at each corner, so touching shapes merge under the nonzero rule. */
function rectPath(x: number, y: number, w: number, h: number, [tl, tr, br, bl]: Radii): string {
  const arc = (r: number, toX: number, toY: number) =>
    r > 0 ? `A${num(r)} ${num(r)} 0 0 1 ${num(toX)} ${num(toY)}` : "";
  return (
    `M${num(x + tl)} ${num(y)}H${num(x + w - tr)}${arc(tr, x + w, y + tr)}` +
    `V${num(y + h - br)}${arc(br, x + w - br, y + h)}` +
    `H${num(x + bl)}${arc(bl, x, y + h - bl)}` +
    `V${num(y + tl)}${arc(tl, x + tl, y)}Z`
  );
}

function circlePath(cx: number, cy: number, r: number): string {
  return `M${num(cx - r)} ${num(cy)}A${num(r)} ${num(r)} 0 1 1 ${num(cx + r)} ${num(cy)}A${num(r)} ${num(r)} 0 1 1 ${num(cx - r)} ${num(cy)}Z`;
}

/** Numbers with at most three decimals: exact enough at 4096 px, and never "NaN" or an exponent. */
function num(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`cannot draw ${n}`);
  return String(Math.round(n * 1000) / 1000);
}

function color(value: string): string {
  if (!/^#[0-9a-f]{6}$/.test(value)) throw new Error(`${JSON.stringify(value)} is not a normalized colour`);
  return value;
}

/** XML-escapes text and drops what XML 1.0 cannot hold at all (controls, lone surrogates, U+FFFE/U+FFFF). */
export function escapeText(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "")
    .replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
