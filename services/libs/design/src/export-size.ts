/**
 * The side of a QR-code image in pixels, inclusive bounds and the size when none is asked for: for a
 * design's own size and for an export's. The edge checks an export's `size` with them before anything
 * is rendered, and the rendering service enforces the same ones. 4096 px is already print quality at 30 cm.
 */
export const EXPORT_SIZE = { min: 128, max: 4096, default: 1024 } as const;
