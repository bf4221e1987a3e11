// The built console as the edge serves it (tools/build/test-setup.ts builds it when its sources changed).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { CONSOLE_DIST } from "../build.ts";

/** The ceiling for the whole first load's JavaScript, gzip-compressed. */
const FIRST_LOAD_JS_BUDGET = 250 * 1024;

const index = () => readFileSync(join(CONSOLE_DIST, "index.html"), "utf8");

describe("the built console", () => {
  it("loads at most 250 KB of gzip-compressed JavaScript on its first page", () => {
    const html = index();
    // Everything index.html makes the browser fetch as script: entry modules and their preloads.
    const scripts = [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="modulepreload"[^>]*\shref)="([^"]+)"/g)].map(
      (m) => m[1]!,
    );
    expect(scripts.length).toBeGreaterThan(0);
    const gzipped = scripts.map((src) => {
      expect(src).toMatch(/^\/console\/assets\/[\w-]+-[\w-]{8}\.js$/);
      return gzipSync(readFileSync(join(CONSOLE_DIST, src.replace(/^\/console\//, ""))), { level: 9 }).length;
    });
    const total = gzipped.reduce((a, b) => a + b, 0);
    console.info(`console first-load JavaScript: ${(total / 1024).toFixed(1)} KB gzip in ${scripts.length} file(s)`);
    expect(total).toBeLessThanOrEqual(FIRST_LOAD_JS_BUDGET);
  });

  it("has no inline script or style and names no other host, so the CSP needs no exception", () => {
    const html = index();
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
  });

  it("hashes every asset's name, so the edge may cache them for good", () => {
    for (const name of readdirSync(join(CONSOLE_DIST, "assets"))) expect(name).toMatch(/-[\w-]{8}\.(js|css)$/);
  });

  it("renders user text as text only: no raw HTML and no eval in the sources", () => {
    const sources = join(CONSOLE_DIST, "../src");
    const files = readdirSync(sources, { recursive: true, encoding: "utf8" }).filter((f) => /\.tsx?$/.test(f));
    for (const file of files) {
      const text = readFileSync(join(sources, file), "utf8");
      expect(text, file).not.toMatch(
        /dangerouslySetInnerHTML|innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(/,
      );
    }
  });
});
