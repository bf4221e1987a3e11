// The design editor's state and its mapping to the API's DesignInput. The editor keeps plain strings
// and booleans (what form controls hold); the API takes only what differs from nothing, so a default
// stays the server's to choose (error correction follows the logo there, for instance).
import type { components } from "@qrplatform/api-client";

export type DesignInput = components["schemas"]["DesignInput"];
export type ModuleStyle = components["schemas"]["ModuleStyle"];
export type CornerShape = components["schemas"]["CornerShape"];
export type FrameType = components["schemas"]["FrameType"];
export type ErrorCorrection = components["schemas"]["ErrorCorrection"];

/** What the editor's controls hold. */
export interface DesignForm {
  foreground: string;
  background: string;
  style: ModuleStyle;
  cornerSquareShape: CornerShape;
  cornerDotShape: CornerShape;
  /** "" leaves the level to the API (M, or H with a logo). */
  errorCorrection: ErrorCorrection | "";
  frameEnabled: boolean;
  frameType: FrameType;
  frameColor: string;
  labelTop: string;
  labelBottom: string;
  logoUrl: string;
  /** The logo's width as a fraction of the code's, as text from a number control. */
  logoScale: string;
}

export const MODULE_STYLES: readonly ModuleStyle[] = [
  "square",
  "dots",
  "rounded",
  "extra-rounded",
  "classy",
  "classy-rounded",
];
export const CORNER_SHAPES: readonly CornerShape[] = ["square", "rounded", "circle"];
export const FRAME_TYPES: readonly FrameType[] = ["square", "rounded", "circle"];
export const ERROR_CORRECTIONS: readonly ErrorCorrection[] = ["L", "M", "Q", "H"];

/** The canvas a design's pixel values are measured on; exports scale it to any size (the API's default). */
export const DESIGN_SIZE = 1024;
/** The frame's border on that canvas (the API's default). */
export const FRAME_BORDER = 8;

/** The editor's starting point: the API's defaults. */
export const DEFAULT_DESIGN: DesignForm = {
  foreground: "#000000",
  background: "#ffffff",
  style: "square",
  cornerSquareShape: "square",
  cornerDotShape: "square",
  errorCorrection: "",
  frameEnabled: false,
  frameType: "square",
  frameColor: "#000000",
  labelTop: "",
  labelBottom: "",
  logoUrl: "",
  logoScale: "0.2",
};

/** The API's DesignInput for the editor's state. */
export function toDesignInput(form: DesignForm): DesignInput {
  const design: DesignInput = {
    foreground: form.foreground,
    background: form.background,
    style: form.style,
    cornerSquareShape: form.cornerSquareShape,
    cornerDotShape: form.cornerDotShape,
    size: DESIGN_SIZE,
  };
  if (form.errorCorrection) design.errorCorrection = form.errorCorrection;
  if (form.frameEnabled) {
    const frame: NonNullable<DesignInput["frame"]> = {
      enabled: true,
      type: form.frameType,
      color: form.frameColor,
      borderThickness: FRAME_BORDER,
    };
    if (form.labelTop.trim()) frame.labelTop = form.labelTop;
    if (form.labelBottom.trim()) frame.labelBottom = form.labelBottom;
    design.frame = frame;
  }
  const logoUrl = form.logoUrl.trim();
  if (logoUrl) design.logo = { url: logoUrl, scale: Number(form.logoScale) };
  return design;
}

/**
 * The editor control a refused field belongs to, so the refusal is shown beside it: `design.frame.labelTop`
 * is the top label's, `premium_frames_required` (which names no field) the frame's.
 */
export function designControlOf(field: string): keyof DesignForm | undefined {
  const map: Record<string, keyof DesignForm> = {
    "design.foreground": "foreground",
    "design.background": "background",
    "design.style": "style",
    "design.errorCorrection": "errorCorrection",
    "design.cornerSquareShape": "cornerSquareShape",
    "design.cornerDotShape": "cornerDotShape",
    "design.frame": "frameType",
    "design.frame.enabled": "frameEnabled",
    "design.frame.type": "frameType",
    "design.frame.color": "frameColor",
    "design.frame.labelTop": "labelTop",
    "design.frame.labelBottom": "labelBottom",
    "design.logo": "logoUrl",
    "design.logo.url": "logoUrl",
    "design.logo.dataUri": "logoUrl",
    "design.logo.scale": "logoScale",
  };
  return map[field];
}
