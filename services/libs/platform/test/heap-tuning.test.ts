// turnOffAllocationSitePretenuring: after it, V8 never decides to allocate a line's objects in the old
// generation, however long they live (ADR 0014).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const CHILD = fileURLToPath(new URL("./support/pretenuring-child.ts", import.meta.url));

/** The pretenuring decisions V8 printed while the child kept its arrays alive. */
function tenureDecisions(mode: "tuned" | "default"): number {
  // A 1 MB young generation: many collections, each weighing the arrays' line again.
  const child = spawnSync(
    process.execPath,
    ["--import", "tsx", "--max-semi-space-size=1", "--trace-pretenuring-statistics", CHILD, mode],
    {
      encoding: "utf8",
    },
  );
  expect(child.status, child.stderr).toBe(0);
  expect(child.stdout).toContain("kept 2000000");
  return child.stdout.split("\n").filter((line) => line.includes("=> tenure")).length;
}

describe("turnOffAllocationSitePretenuring", () => {
  it("leaves long-lived objects in the young generation where V8 would otherwise allocate them old", () => {
    expect(tenureDecisions("default")).toBeGreaterThan(0);
    expect(tenureDecisions("tuned")).toBe(0);
  });
});
