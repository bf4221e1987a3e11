// The documentation's relative links lead somewhere, and the repository stands alone: no tracked file
// sends readers to a path beside the checkout.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "@qrplatform/testing";

const tracked = (...patterns: string[]): string[] =>
  execFileSync("git", ["ls-files", "--", ...patterns], { cwd: REPO_ROOT, encoding: "utf8" })
    .split("\n")
    .filter(Boolean);

// A git pathspec's * crosses folders: docs/*.md is every page under docs/, the ADRs included.
const pages = (): string[] => tracked("README.md", "docs/*.md");

/** Markdown link targets of a page, outside code: `[text](target)`, without any title. */
function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!);
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

function anchorsOf(markdown: string): Set<string> {
  const headings = markdown.replace(/```[\s\S]*?```/g, "").matchAll(/^#{1,6} (.+)$/gm);
  return new Set([...headings].map((match) => anchorOf(match[1]!)));
}

describe("documentation links", () => {
  it("finds the pages and their links", () => {
    expect(pages()).toEqual(
      expect.arrayContaining([
        "README.md",
        "docs/configuration.md",
        "docs/api-guide.md",
        "docs/operations.md",
        "docs/benchmarks.md",
        "docs/adr/0001-one-codebase-two-shapes.md",
      ]),
    );
    expect(linkTargets(readFileSync(join(REPO_ROOT, "README.md"), "utf8"))).toContain("docs/api-guide.md");
  });

  it("points every relative link at a file or folder of the repository, and every anchor at a heading", () => {
    const broken: string[] = [];
    for (const page of pages()) {
      const markdown = readFileSync(join(REPO_ROOT, page), "utf8");
      for (const target of linkTargets(markdown)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
        const [path, anchor] = target.split("#", 2) as [string, string | undefined];
        const file =
          path === "" ? join(REPO_ROOT, page) : resolve(dirname(join(REPO_ROOT, page)), decodeURIComponent(path));
        if (relative(REPO_ROOT, file).startsWith("..")) {
          broken.push(`${page}: ${target} leaves the repository`);
        } else if (!existsSync(file)) {
          broken.push(`${page}: ${target} does not exist`);
        } else if (anchor !== undefined && file.endsWith(".md") && !anchorsOf(readFileSync(file, "utf8")).has(anchor)) {
          broken.push(`${page}: ${target} names no heading of ${relative(REPO_ROOT, file)}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("sends no reader outside the repository: no tracked file mentions the sources folder beside it", () => {
    // Spelled in two parts so that this file does not mention it either.
    const outside = ["..", "shared"].join("/");
    // git grep exits 1 when nothing matches, 2 on an error.
    const grep = spawnSync("git", ["grep", "-l", "-F", outside, "--", "."], { cwd: REPO_ROOT, encoding: "utf8" });
    expect(grep.status, grep.stderr).not.toBe(2);
    const mentions = grep.stdout.split("\n").filter(Boolean);
    expect(mentions).toEqual([]);
  });
});
