// The image's `npm ci` sees only the workspace manifests the Dockerfile copies, so a package whose
// code the image compiles must not import a workspace package left out of that list: esbuild then
// cannot resolve it, and only the image build (CI's, with buildah) would say so.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*)["'](@qrplatform\/[^/"']+)/g;

/** Every workspace folder of the root package.json, with its package name. */
function workspaces(): Map<string, string> {
  const patterns: string[] = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).workspaces;
  const folders = patterns.flatMap((pattern) =>
    pattern.endsWith("/*")
      ? readdirSync(join(REPO_ROOT, pattern.slice(0, -2))).map((name) => `${pattern.slice(0, -2)}/${name}`)
      : [pattern],
  );
  return new Map(
    folders.map((folder) => [JSON.parse(readFileSync(join(REPO_ROOT, folder, "package.json"), "utf8")).name, folder]),
  );
}

/** The workspace folders whose manifests the Dockerfile copies. */
function copiedFolders(dockerfile: string): string[] {
  return [...dockerfile.matchAll(/^COPY (\S+)\/package\.json \S+$/gm)].map((match) => match[1]!);
}

/**
 * The @qrplatform packages the production sources of a folder import: tests, their support and a
 * package's `testing` entry (src/testing.ts, which only tests import) left out.
 */
function importedPackages(folder: string): Set<string> {
  const found = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) {
        if (!["test", "node_modules", "dist"].includes(entry)) walk(path);
      } else if (/\.tsx?$/.test(entry) && entry !== "testing.ts") {
        for (const match of readFileSync(path, "utf8").matchAll(IMPORT)) found.add(match[1]!);
      }
    }
  };
  walk(join(REPO_ROOT, folder));
  return found;
}

describe("the image's workspace manifests", () => {
  const byName = workspaces();
  const copied = copiedFolders(readFileSync(join(REPO_ROOT, "Dockerfile"), "utf8"));

  it("copies the manifest of every workspace package that the image's packages import", () => {
    expect(copied.length).toBeGreaterThan(5);
    const missing = copied.flatMap((folder) =>
      [...importedPackages(folder)]
        .filter((name) => byName.has(name) && !copied.includes(byName.get(name)!))
        .map((name) => `${folder} imports ${name} (${byName.get(name)})`),
    );
    expect(missing).toEqual([]);
  });

  it("finds what the catalog imports, so a missing manifest would show", () => {
    expect(importedPackages("services/catalog")).toContain("@qrplatform/routing");
  });
});
