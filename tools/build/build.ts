// `npm run build`: every process of the platform compiled to JavaScript in dist/, one file per entry
// point, run with plain `node` (no tsx, no devDependencies). The workspace packages (@qrplatform/*)
// are compiled into each file; the npm dependencies stay imports, installed with `npm ci --omit=dev`.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { buildConsole } from "@qrplatform/console/build";
import { PROCESSES } from "@qrplatform/platform/layout";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Each compiled entry point: dist/<name>.js from its TypeScript source. */
export const ENTRY_POINTS: Record<string, string> = {
  ...Object.fromEntries(Object.entries(PROCESSES).map(([name, spec]) => [name, spec.entry])),
  // The render pool's threads load this beside the rendering service (and the embedded platform).
  "render-worker": "services/rendering/src/render/render-worker.ts",
  // The embedded platform runs PGlite on a thread that loads this.
  "pglite-worker": "services/libs/db/src/pglite-worker.ts",
  // A links process on a Postgres server records scans on a thread that loads this.
  "scan-recorder-worker": "services/links/src/scans/recording/scan-recorder-worker.ts",
  embedded: "services/embedded/src/main.ts",
  qrctl: "tools/qrctl/src/cli.ts",
  // Runs only in Kubernetes, so it is not one of PROCESSES.
  operator: "services/operator/src/main.ts",
};

/**
 * Compiles every entry point, and any `extraEntryPoints` (a benchmark's own processes, compiled as
 * what ships is), into `outdir` (relative to the repository root).
 */
export async function buildAll(outdir = "dist", extraEntryPoints: Record<string, string> = {}): Promise<void> {
  const manifest = JSON.parse(readFileSync(`${REPO_ROOT}package.json`, "utf8")) as {
    dependencies: Record<string, string>;
  };
  const external = Object.keys(manifest.dependencies).flatMap((name) => [name, `${name}/*`]);
  await build({
    absWorkingDir: REPO_ROOT,
    entryPoints: { ...ENTRY_POINTS, ...extraEntryPoints },
    outdir,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    sourcemap: true,
    external,
    logLevel: "warning",
  });
}

// `npm run build` also builds the console, which the edge serves from services/console/dist.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await Promise.all([buildAll(process.argv[2]), buildConsole()]);
}
