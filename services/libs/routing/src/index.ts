// Dynamic QR codes' routing: the vocabulary (types), the checks every door runs (validate) and the one
// pure decision the redirector, the resolve preview and the tests share (decide), and the mapping between
// the API's spelling and the proto's (proto).
export * from "./countries.js";
export * from "./decide.js";
export * from "./instants.js";
export * from "./password.js";
export * from "./proto.js";
export * from "./time-zones.js";
export * from "./types.js";
export * from "./validate.js";
export * from "./variants.js";
export * from "./visitor.js";
