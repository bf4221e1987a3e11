// `npm ci` is quiet on the machine's Node and on the project's own Node 24, and the warnings that
// .npmrc keeps out of sight are checked here instead: on the project's Node no package's engines
// are unmet and every install script is allowed or refused by name. A dry run reads the lockfile and
// node_modules only, so each run takes seconds and changes nothing.
import { spawnSync } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "@qrplatform/testing";

/** The first executable of that name on PATH outside the project's node_modules/.bin. */
function onSystemPath(name: string): string {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "" || dir.includes("node_modules")) continue;
    if (existsSync(join(dir, name))) return realpathSync(join(dir, name));
  }
  throw new Error(`no ${name} on PATH`);
}

const npmCli = onSystemPath("npm");
const nodes = {
  "the machine's Node": onSystemPath("node"),
  "the project's Node": join(REPO_ROOT, "node_modules/node/bin/node"),
};

/** What `npm ci --dry-run` prints (warnings go to stderr) when npm runs on `node`, with extra npm arguments. */
function dryRunCi(node: string, args: string[] = []): string {
  // Only the chosen Node on PATH, so npm and anything it starts run on it.
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: [join(node, ".."), process.env.PATH].join(delimiter) };
  for (const key of Object.keys(env)) if (key.startsWith("npm_")) delete env[key];
  const run = spawnSync(node, [npmCli, "ci", "--dry-run", ...args], {
    cwd: REPO_ROOT,
    env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (run.status !== 0) throw new Error(`npm ci --dry-run failed:\n${run.stdout}${run.stderr}`);
  return `${run.stdout}${run.stderr}`;
}

const warnings = (output: string) => output.split("\n").filter((line) => line.startsWith("npm warn"));

describe("npm ci", () => {
  it.each(Object.entries(nodes))(
    "prints no warning on %s",
    (_, node) => {
      expect(warnings(dryRunCi(node))).toEqual([]);
    },
    60_000,
  );

  it("meets every package's engines and has every install script decided, on the project's Node, with warnings shown", () => {
    const shown = warnings(dryRunCi(nodes["the project's Node"], ["--loglevel=warn"]));
    expect(shown).toEqual([]);
  }, 60_000);
});
