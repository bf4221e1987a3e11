// The edge's testing entry (`@qrplatform/edge/testing`), for other packages' tests that need the REST
// API running: the in-process or separate-process stack, the checked HTTP call, and the metrics
// exercise both shapes share. Only tests import it.
export * from "./http.js";
export * from "./metrics-exercise.js";
export * from "./stack.js";
