// CI runs the `storage-free` project (vitest.config.ts's STORAGE_FREE) once, on the embedded default,
// and only the `storage` project again against Postgres and Redis. That is sound only while no
// storage-free file's outcome can depend on DATABASE_URL or REDIS_URL. Two guards keep it so: the
// project runs with both set to STORAGE_POISON, which breaks whatever connects with them (checked
// here: this file is in that project); and the checks below, for what the poison cannot catch: a
// file that reads the variables itself could skip rather than fail, and a file (or a helper of its
// own) that starts a stack or a test database is in the wrong project however it ends.
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, matchesGlob, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { databaseEnv } from "@qrplatform/db";
import { STORAGE_FREE, STORAGE_POISON } from "../../../vitest.config.ts";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const THIS_FILE = "tools/ci/test/storage-projects.test.ts";

/** What reads DATABASE_URL or REDIS_URL from the environment. */
const READS_STORAGE_ENV =
  /\bprocess\.env\s*(?:\?\.|\.|\[\s*["'`])\s*(?:DATABASE_URL|REDIS_URL)\b|\b(?:DATABASE_URL|REDIS_URL)\b[^=\n]*}\s*=\s*process\.env\b/;
/** The helpers that start a platform, a stack, Redis or a test database. */
const STARTS_STORAGE =
  /["'](@qrplatform\/db\/testing|@qrplatform\/edge\/testing|@qrplatform\/embedded\/testing|@qrplatform\/testing\/platform-process|@qrplatform\/testing\/local-services|[^"']*\/support\/(?:stack|links-stack|scratch-platform)\.js)["']|\b(?:startRedis|startPrivatePostgres|openTestDatabase|createScratchDatabase|MIGRATED_PLATFORM|startPlatform|startLocalServices|startScratchPlatform|composePlatform|spawnService)\b/;
const RELATIVE_IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)["'](\.[^"']+)["']/gm;

const testFiles = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "--", "*.test.ts"], {
  cwd: REPO_ROOT,
  encoding: "utf8",
})
  .split("\n")
  .filter((file) => file !== "" && !file.includes("node_modules/"));
const storageFree = testFiles.filter((file) => STORAGE_FREE.some((glob) => matchesGlob(file, glob)));

/** The file and the files of its package it imports by a relative path, transitively: its own helpers. */
function withOwnHelpers(file: string): string[] {
  const ownPackage = `${file.slice(0, file.lastIndexOf("/test/"))}/`;
  const seen = new Set([file]);
  for (const current of seen) {
    let source: string;
    try {
      source = readFileSync(join(REPO_ROOT, current), "utf8");
    } catch {
      continue; // a data file, or deleted in the working tree
    }
    for (const [, specifier] of source.matchAll(RELATIVE_IMPORT)) {
      const target = normalize(join(dirname(current), specifier!)).replace(/\.js$/, ".ts");
      if (target.endsWith(".ts") && target.startsWith(ownPackage)) seen.add(target);
    }
  }
  return [...seen];
}

/** Where `file` or a helper of its own matches `pattern`, as "helper: line". */
function findings(file: string, pattern: RegExp): string[] {
  return withOwnHelpers(file).flatMap((helper) => {
    let source: string;
    try {
      source = readFileSync(join(REPO_ROOT, helper), "utf8");
    } catch {
      return [];
    }
    return source
      .split("\n")
      .filter((line) => pattern.test(line))
      .map((line) => `${file} (${helper}): ${line.trim()}`);
  });
}

describe("the storage-free project", () => {
  it("names only files that exist, and leaves most of the suite to the storage project", () => {
    for (const glob of STORAGE_FREE)
      expect(
        testFiles.some((file) => matchesGlob(file, glob)),
        `${glob} matches no test file`,
      ).toBe(true);
    expect(storageFree.length).toBeGreaterThan(0);
    expect(storageFree.length).toBeLessThan(testFiles.length);
  });

  it("runs with DATABASE_URL and REDIS_URL poisoned, for this process and what it starts", () => {
    expect(process.env.DATABASE_URL).toBe(STORAGE_POISON);
    expect(process.env.REDIS_URL).toBe(STORAGE_POISON);
    const child = spawnSync(process.execPath, ["-p", "process.env.DATABASE_URL + '|' + process.env.REDIS_URL"], {
      encoding: "utf8",
    });
    expect(child.stdout.trim()).toBe(`${STORAGE_POISON}|${STORAGE_POISON}`);
    // The processes' config refuses it, so anything that would connect fails instead.
    expect(databaseEnv.safeParse({ DATABASE_URL: STORAGE_POISON }).success).toBe(false);
    expect(() => new URL(STORAGE_POISON)).toThrow();
  });

  it("finds a read of the variables and a stack started, in a file or in a helper of its own", () => {
    expect(READS_STORAGE_ENV.test("describe.skipIf(!process.env.DATABASE_URL)(")).toBe(true);
    expect(READS_STORAGE_ENV.test('const url = process.env["REDIS_URL"];')).toBe(true);
    expect(READS_STORAGE_ENV.test("const { DATABASE_URL: url } = process.env;")).toBe(true);
    expect(READS_STORAGE_ENV.test('expect(env).not.toHaveProperty("DATABASE_URL");')).toBe(false);
    expect(STARTS_STORAGE.test('import { startScratchPlatform } from "@qrplatform/embedded/testing";')).toBe(true);
    expect(STARTS_STORAGE.test('import { startStack } from "./support/stack.js";')).toBe(true);
    expect(STARTS_STORAGE.test('import { zbarDecode } from "@qrplatform/testing/decoders";')).toBe(false);
    // The chart test reads the platform's metric names from a scratch platform, through a helper.
    expect(findings("tools/charts/test/chart.test.ts", STARTS_STORAGE)).not.toEqual([]);
  });

  it("has no file that reads DATABASE_URL or REDIS_URL, or starts a stack or a test database", () => {
    const files = storageFree.filter((file) => file !== THIS_FILE);
    expect(files.flatMap((file) => findings(file, READS_STORAGE_ENV))).toEqual([]);
    expect(files.flatMap((file) => findings(file, STARTS_STORAGE))).toEqual([]);
  });
});
