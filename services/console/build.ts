// Builds the console into services/console/dist when its sources changed since the last build:
// typechecked against the API client generated from the OpenAPI document (so a change in the API
// breaks this build, not the console's users), then bundled by Vite with hashed asset names.
// Runs before `npm start` (prestart), in `npm run build` (and so in the image) and in the tests' setup.
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

// Not import.meta.resolve: vitest's module runner, which loads this file for the tests' setup, lacks it.
const require = createRequire(import.meta.url);
const CONSOLE_DIR = fileURLToPath(new URL(".", import.meta.url));
const REPO_ROOT = join(CONSOLE_DIR, "../..");

/** Where the built console lands; the edge serves this folder (see @qrplatform/edge's consoleRouter). */
export const CONSOLE_DIST = join(CONSOLE_DIR, "dist");

const STAMP = join(CONSOLE_DIST, ".sources.sha256");

/** Every input of the build: the console's sources and config, and the API client it is typed by. */
function sourceFiles(): string[] {
  const roots = [
    join(CONSOLE_DIR, "src"),
    join(CONSOLE_DIR, "index.html"),
    join(CONSOLE_DIR, "vite.config.ts"),
    join(CONSOLE_DIR, "tsconfig.json"),
    join(REPO_ROOT, "services/libs/api-client/src"),
    join(REPO_ROOT, "package-lock.json"),
  ];
  const files: string[] = [];
  const walk = (path: string) => {
    if (statSync(path).isDirectory()) for (const name of readdirSync(path).sort()) walk(join(path, name));
    else files.push(path);
  };
  for (const root of roots) walk(root);
  return files;
}

function sourcesHash(): string {
  const hash = createHash("sha256");
  for (const file of sourceFiles()) hash.update(relative(REPO_ROOT, file)).update("\0").update(readFileSync(file));
  return hash.digest("hex");
}

/** Builds the console unless dist/ was built from these very sources; returns whether it built. */
export async function buildConsole({ force = false } = {}): Promise<boolean> {
  const hash = sourcesHash();
  if (!force && existsSync(STAMP) && readFileSync(STAMP, "utf8") === hash) return false;
  // tsc rather than Vite alone: Vite strips types without checking them.
  execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", join(CONSOLE_DIR, "tsconfig.json")], {
    cwd: REPO_ROOT,
    stdio: "inherit",
  });
  const { build } = await import("vite");
  await build({ configFile: join(CONSOLE_DIR, "vite.config.ts"), logLevel: "warn" });
  writeFileSync(STAMP, hash);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const built = await buildConsole({ force: process.argv.includes("--force") });
  if (built) process.stdout.write(`console built into ${relative(process.cwd(), CONSOLE_DIST)}\n`);
}
