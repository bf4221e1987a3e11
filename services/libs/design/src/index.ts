// The design vocabulary shared by the edge, the catalog and the rendering service: the public tokens of
// the design's enums and the bounds of an exported image. Rendering applies the rules; this is the words.
export * from "./design-tokens.js";
export * from "./export-size.js";
