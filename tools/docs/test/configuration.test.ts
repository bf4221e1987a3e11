// docs/configuration.md against the code: every environment variable a process reads is documented,
// and the page documents no variable the code no longer reads.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "@qrplatform/testing";

const tracked = (...patterns: string[]): string[] =>
  execFileSync("git", ["ls-files", "--", ...patterns], { cwd: REPO_ROOT, encoding: "utf8" })
    .split("\n")
    .filter(Boolean);

// The code of every process, qrctl, the local runner and the tests' helm and kubectl lookup; not tests,
// benchmarks (their variables are checked against docs/benchmarks.md below) or generated code.
const configurationSources = (): string[] =>
  tracked("services/*.ts", "tools/qrctl/*.ts", "tools/charts/*.ts", "tools/test-tools/*.ts", "deploy/*.ts").filter(
    (path) => !/(^|\/)test\//.test(path) && !path.startsWith("services/libs/api") && !path.endsWith(".d.ts"),
  );

// Set by the system or by vitest, never by whoever runs the platform.
const NOT_CONFIGURATION = new Set(["PATH", "VITEST_POOL_ID"]);
// Documented because the platform's processes honour them, but read by the OpenTelemetry SDK itself.
const READ_BY_LIBRARIES = new Set(["OTEL_EXPORTER_OTLP_PROTOCOL"]);

const NAME = "[A-Z][A-Z0-9_]*[A-Z0-9]";
// How the code reads a variable: a key of a zod schema given to readConfig (a zod builder or one of
// the platform's config helpers), or a property of process.env or of an `env` record passed in.
const READS = [
  new RegExp(
    `\\b(${NAME})\\s*:\\s*(?:z\\s*\\.|secretVar\\(|portVar\\(|optionalVar\\(|logLevelVar\\(|metricsPortVar\\(|seconds\\b)`,
    "g",
  ),
  // ...or a schema the file built itself and names (`WEBHOOK_CONCURRENCY: count.default(16)`).
  new RegExp(`\\b(${NAME})\\s*:\\s*[a-z][A-Za-z]*\\.(?:default|optional)\\(`, "g"),
  new RegExp(`\\b(?:process\\.env|env)\\s*(?:\\?\\.|\\.)\\s*(${NAME})\\b`, "g"),
  new RegExp(`\\b(?:process\\.env|env)\\s*\\[\\s*["'\`](${NAME})["'\`]\\s*\\]`, "g"),
  // qrctl names its per-service address variables in calls such as addressOf(flag, "--x", "QRCTL_X").
  /["'`](QRCTL_[A-Z0-9_]*[A-Z0-9])["'`]/g,
];

function variablesReadBy(paths: string[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const path of paths) {
    const source = readFileSync(join(REPO_ROOT, path), "utf8");
    for (const pattern of READS) {
      for (const match of source.matchAll(pattern)) {
        const name = match[1]!;
        if (NOT_CONFIGURATION.has(name)) continue;
        found.set(name, [...new Set([...(found.get(name) ?? []), path])]);
      }
    }
  }
  return found;
}

/** Variables a page documents: the backticked names in the first cell of its tables' rows. */
function documentedIn(page: string): Set<string> {
  const names = new Set<string>();
  for (const line of readFileSync(join(REPO_ROOT, page), "utf8").split("\n")) {
    const firstCell = /^\|([^|]*)\|/.exec(line)?.[1];
    if (!firstCell) continue;
    for (const match of firstCell.matchAll(new RegExp(`\`(${NAME})\``, "g"))) names.add(match[1]!);
  }
  return names;
}

describe("docs/configuration.md", () => {
  const read = variablesReadBy(configurationSources());
  const documented = documentedIn("docs/configuration.md");

  it("finds the variables the code reads", () => {
    // A scan that found nothing would pass every check below.
    for (const name of [
      "DATABASE_URL",
      "WEBHOOK_ALLOW_LOOPBACK",
      "OTEL_SDK_DISABLED",
      "QRCTL_LINKS_ADDRESS",
      "CLUSTER_ISSUER",
      "HELM_BIN",
    ]) {
      expect(read.has(name), name).toBe(true);
    }
  });

  it("documents every variable the code reads", () => {
    const missing = [...read]
      .filter(([name]) => !documented.has(name))
      .map(([name, paths]) => `${name} (read in ${paths.join(", ")})`);
    expect(missing, "add these to docs/configuration.md").toEqual([]);
  });

  it("documents no variable the code no longer reads", () => {
    const stale = [...documented].filter((name) => !read.has(name) && !READ_BY_LIBRARIES.has(name));
    expect(stale, "remove these from docs/configuration.md, or read them").toEqual([]);
  });
});

describe("docs/benchmarks.md", () => {
  it("documents every BENCH_ variable a benchmark reads", () => {
    const read = variablesReadBy(tracked("tools/bench/*.ts"));
    const page = readFileSync(join(REPO_ROOT, "docs/benchmarks.md"), "utf8");
    const benchVariables = [...read.keys()].filter((name) => name.startsWith("BENCH_"));
    expect(benchVariables.length).toBeGreaterThan(0);
    expect(benchVariables.filter((name) => !new RegExp(`\`${name}[\`=]`).test(page))).toEqual([]);
  });
});
