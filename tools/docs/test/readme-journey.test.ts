// The README's first-account journey, run as written against an `npm start` of its own: each command
// in a shell at the repository root, with the values earlier steps printed put in for their
// placeholders, and each step's output checked against what the README says it prints.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScratchDatabase, type ScratchDatabase } from "@qrplatform/db/testing";
import { REPO_ROOT } from "@qrplatform/testing";
import { startPlatformProcess, type PlatformProcess } from "@qrplatform/testing/platform-process";
import { journeySteps, matchJson, substitute, type JourneyStep } from "./readme-journey.ts";

const README_ORIGIN = "http://127.0.0.1:8080";
// Scans reach analytics within a few seconds (batched, then folded): the analytics step is asked
// again until it counts the scan or this long has passed.
const ANALYTICS_PATIENCE_MS = 30_000;

function shell(
  command: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      "bash",
      ["-c", command],
      { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? tmpdir(), ...env } },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The first mismatch between a step's documented output and what it printed, or undefined. */
function mismatchOf(step: JourneyStep, stdout: string, values: Map<string, string>): string | undefined {
  if (step.expected.length === 0) return undefined;
  if (step.expected[0]!.startsWith("{")) return matchJson(step.expected.join("\n"), stdout, values);
  // Other output (headers): every documented line appears, header names in any case.
  const printed = stdout.split(/\r?\n/).map((line) => line.trim().toLowerCase());
  const missing = step.expected.find((line) => !printed.includes(line.trim().toLowerCase()));
  return missing === undefined ? undefined : `did not print "${missing}"`;
}

describe("the README's first-account journey", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "qrp-readme-journey-"));
  let scratch: ScratchDatabase | undefined;
  let platform: PlatformProcess;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    platform = await startPlatformProcess(dataDir, scratch ? { DATABASE_URL: scratch.url } : {}, "sources");
  }, 120_000);

  afterAll(async () => {
    expect(await platform?.stop()).toBe(0);
    await scratch?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("parses into steps that end with the analytics call counting one scan", () => {
    const steps = journeySteps(readFileSync(join(REPO_ROOT, "README.md"), "utf8"));
    expect(steps.map((step) => step.command.split(" ").slice(0, 2).join(" "))).toContain("npx qrctl");
    const last = steps.at(-1)!;
    expect(last.command).toContain("/analytics");
    expect(last.expected.join("")).toContain('"total_scans":1');
  });

  it("does what the README says, step by step", async () => {
    const origin = new URL(platform.apiUrl).origin;
    const steps = journeySteps(readFileSync(join(REPO_ROOT, "README.md"), "utf8"));
    const values = new Map<string, string>();
    const env: Record<string, string> = { DATA_DIR: dataDir };
    for (const step of steps) {
      const command = substitute(step.command, values).replaceAll(README_ORIGIN, origin);
      const exported = /^export (\w+)=(\S+)$/.exec(command);
      if (exported) {
        env[exported[1]!] = exported[2]!;
        continue;
      }
      const deadline = Date.now() + (command.includes("/analytics") ? ANALYTICS_PATIENCE_MS : 0);
      for (;;) {
        const run = await shell(command, env);
        const attempt = new Map(values);
        const mismatch = run.code !== 0 ? `exited ${run.code}: ${run.stderr}` : mismatchOf(step, run.stdout, attempt);
        if (mismatch === undefined) {
          for (const [name, value] of attempt) values.set(name, value);
          break;
        }
        if (Date.now() >= deadline) {
          throw new Error(
            `README step failed: ${step.command}\n${mismatch}\nprinted: ${run.stdout}\n--- npm start printed:\n${platform.output()}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    // Every placeholder a step printed was captured, so the journey ran to its end with real ids.
    expect([...values.keys()]).toEqual(
      expect.arrayContaining(["account id", "key", "workspace id", "qr code id", "vanity url"]),
    );
  }, 180_000);
});
