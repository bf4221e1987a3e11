// The console's build: Preact's JSX, hashed names under assets/ (served immutable by the edge), no
// inline script or style in index.html (the edge's CSP forbids them), and nothing loaded from
// elsewhere at run time.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/console/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsDir: "assets",
    // Inlined assets would become data: URLs; keep every asset a file of its own.
    assetsInlineLimit: 0,
    // The modulepreload polyfill is code of its own; every browser the console supports has the feature.
    modulePreload: { polyfill: false },
    target: "es2022",
    sourcemap: false,
  },
});
