// Tests share helpers through packages, never by reaching into another package's folders: a test that
// imports `../../links/test/support/…` breaks when links moves its tests, and hides a helper that
// belongs in @qrplatform/testing (or in a package's own `testing` entry, such as @qrplatform/db/testing).
// This check runs with the suite in CI. It reads import specifiers as text, which is all it needs: a
// relative import either leaves its package or it does not. (Biome's noRestrictedImports matches
// specifiers, not where they resolve, so it cannot tell `../support/x.js` inside a package from
// `../../links/test/support/x.js` across packages.)
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, normalize, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";

/** The checkout this file is in (not @qrplatform/testing's, so that the check also runs on any tree it is copied into). */
const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const THIS_FILE = "tools/ci/test/test-imports.test.ts";
const SPECIFIER = /(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm;

/** The package a test file belongs to: the folder holding its `test/` folder. */
function packageOf(file: string): string | undefined {
  const at = file.split("/").indexOf("test");
  return at > 0 ? file.split("/").slice(0, at).join("/") : undefined;
}

/** The folders of the root package.json's workspaces ("services/libs/*" expanded). */
function workspaceFolders(files: readonly string[]): string[] {
  const patterns: string[] = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).workspaces;
  const folders = new Set<string>();
  for (const pattern of patterns) {
    if (!pattern.endsWith("/*")) {
      folders.add(pattern);
      continue;
    }
    const parent = pattern.slice(0, -1);
    for (const file of files)
      if (file.startsWith(parent)) folders.add(parent + file.slice(parent.length).split("/")[0]);
  }
  return [...folders];
}

const inside = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`);

/**
 * The imports in `source` (the text of test file `file`) that leave its package for another workspace
 * package, another package's test folder, or tools/testing. Folders that are no package (tools/build,
 * tools/test-tools) may be imported: they are scripts, not another package's insides.
 */
function crossPackageImports(file: string, source: string, workspaces: readonly string[]): string[] {
  const own = packageOf(file);
  if (!own) return [];
  const found: string[] = [];
  for (const [, specifier] of source.matchAll(SPECIFIER)) {
    if (!specifier!.startsWith(".")) continue;
    const target = normalize(join(dirname(file), specifier!))
      .split(sep)
      .join("/");
    if (inside(target, own)) continue;
    const reachesTests = target.split("/").includes("test") || inside(target, "tools/testing");
    if (reachesTests || workspaces.some((folder) => inside(target, folder))) found.push(`${file}: ${specifier}`);
  }
  return found;
}

/** Production imports of test helpers: @qrplatform/testing, or any package's `testing` entry. */
function testingImportsInProduction(file: string, source: string): string[] {
  const found: string[] = [];
  for (const [, specifier] of source.matchAll(SPECIFIER)) {
    if (
      specifier === "@qrplatform/testing" ||
      /^@qrplatform\/[^/]+\/testing$/.test(specifier!) ||
      specifier!.startsWith("@qrplatform/testing/")
    ) {
      found.push(`${file}: ${specifier}`);
    }
  }
  return found;
}

const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "--", "*.ts"], {
  cwd: REPO_ROOT,
  encoding: "utf8",
})
  .split("\n")
  .filter((file) => file !== "" && !file.includes("node_modules/"));
const read = (file: string) => {
  try {
    return readFileSync(join(REPO_ROOT, file), "utf8");
  } catch {
    return ""; // deleted in the working tree but still in the index
  }
};

describe("imports between packages", () => {
  const workspaces = workspaceFolders(files);

  it("finds an import that reaches into another package's tests, and passes one inside its own", () => {
    const rest = "services/edge/test/support/rest-suite.ts";
    expect(
      crossPackageImports(rest, `import { x } from "../../../rendering/test/support/decoders.js";`, workspaces),
    ).toHaveLength(1);
    expect(
      crossPackageImports(
        "tools/qrctl/test/a.test.ts",
        `import { M } from "../../testing/migrated-platform.js";`,
        workspaces,
      ),
    ).toHaveLength(1);
    expect(
      crossPackageImports(
        "tools/charts/test/a.ts",
        `const m = await import("../../../services/embedded/src/platform.ts");`,
        workspaces,
      ),
    ).toHaveLength(1);
    expect(
      crossPackageImports(
        rest,
        `import { call } from "./http.js";\nimport { buildEdge } from "../../src/server.js";`,
        workspaces,
      ),
    ).toEqual([]);
    expect(
      crossPackageImports(
        "tools/charts/test/chart.test.ts",
        `import { ENTRY_POINTS } from "../../build/build.ts";`,
        workspaces,
      ),
    ).toEqual([]);
  });

  it("no test imports another package's files by a relative path", () => {
    const found = files
      .filter((file) => packageOf(file) && file !== THIS_FILE)
      .flatMap((file) => crossPackageImports(file, read(file), workspaces));
    expect(found, "import these through a package (@qrplatform/testing, or the package's own testing entry)").toEqual(
      [],
    );
  });

  it("no production code imports a test helper", () => {
    const production = files.filter(
      (file) =>
        (inside(file, "services") || inside(file, "tools/qrctl")) &&
        file.split("/").includes("src") &&
        !inside(file, "services/libs/testing") &&
        !file.endsWith("/testing.ts"), // a library's own testing entry, itself only for tests
    );
    expect(production.length).toBeGreaterThan(50);
    expect(production.flatMap((file) => testingImportsInProduction(file, read(file)))).toEqual([]);
  });
});
