// The design vocabulary shared by the edge, the catalog and the rendering service: the public tokens of
// the design's enums, the bounds of an exported image, and the add-on rule for premium frames.
// Rendering applies the design rules; this is the words.
export * from "./design-tokens.js";
export * from "./export-size.js";
export * from "./premium-frames.js";
