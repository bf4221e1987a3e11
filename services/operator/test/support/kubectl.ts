// The real kubectl, as an SRE runs it, against a fake API server: a kubeconfig and a discovery cache of
// its own in a temp dir, the binary from tools/test-tools/kube-binaries.ts (the npm package that carries
// helm for the chart tests). Runs asynchronously: the fake answers from this same process.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FakeKubeApiServer } from "@qrplatform/fake-kube-apiserver";
import { obtainKubectl } from "../../../../tools/test-tools/kube-binaries.js";

/** What one kubectl run printed. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A kubectl pointed at one fake API server. */
export class KubectlCli {
  private readonly binary = obtainKubectl();
  private readonly home = mkdtempSync(join(tmpdir(), "qrp-kubectl-"));
  private readonly kubeconfig = join(this.home, "kubeconfig");

  constructor(fake: FakeKubeApiServer) {
    writeFileSync(this.kubeconfig, fake.kubeConfigYaml());
  }

  /** Runs `kubectl <args>`; never throws for a non-zero exit. */
  run(...args: string[]): Promise<KubectlResult> {
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: this.home,
      KUBECONFIG: this.kubeconfig,
      KUBECACHEDIR: join(this.home, "cache"),
    };
    return new Promise((done) => {
      execFile(this.binary, args, { env, timeout: 30_000 }, (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr }),
      );
    });
  }

  /** Runs kubectl and returns its output, failing with what it printed when it exits non-zero. */
  async ok(...args: string[]): Promise<string> {
    const result = await this.run(...args);
    if (result.code !== 0)
      throw new Error(`kubectl ${args.join(" ")} exited ${result.code}:\n${result.stdout}${result.stderr}`);
    return result.stdout;
  }

  /** A file in kubectl's temp dir, e.g. a manifest to apply. */
  writeFile(name: string, content: string): string {
    const path = join(this.home, name);
    writeFileSync(path, content);
    return path;
  }

  /** Removes the temp dir. */
  close(): void {
    rmSync(this.home, { recursive: true, force: true });
  }
}

/**
 * Reads kubectl's table output into one record per row, keyed by the upper-case headers. Columns are
 * cut where their headers start; an empty cell is "".
 */
export function parseTable(output: string): Record<string, string>[] {
  const [header, ...rows] = output.split("\n").filter((line) => line.trim() !== "");
  if (!header) return [];
  // Headers may hold one space ("LAST SEEN"); kubectl pads columns with at least three.
  const starts = [...header.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ name: m[0], at: m.index }));
  return rows.map((row) =>
    Object.fromEntries(
      starts.map((column, i) => [column.name, row.slice(column.at, starts[i + 1]?.at ?? row.length).trim()]),
    ),
  );
}
