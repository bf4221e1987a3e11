// qrctl as the tests run it: a real subprocess, from the compiled build or from the sources.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { expect } from "vitest";
import { REPO_ROOT } from "./processes.js";

/**
 * Which qrctl runs: compiled (dist/qrctl.js, built by the test run's global setup, as the container
 * image ships it), so each of the many runs skips compiling the sources again; or the checkout's
 * bin/qrctl.js, which runs the sources through tsx as `npx qrctl` does.
 */
export const QRCTL_BIN = {
  compiled: join(REPO_ROOT, "dist/qrctl.js"),
  sources: join(REPO_ROOT, "tools/qrctl/bin/qrctl.js"),
} as const;

/** The test run's environment without any address, credential or data directory qrctl would read. */
export const QRCTL_FREE_ENV: Record<string, string | undefined> = (() => {
  const {
    QRCTL_ADDRESS: _address,
    QRCTL_TOKEN: _token,
    QRCTL_TENANCY_ADDRESS: _tenancy,
    QRCTL_LINKS_ADDRESS: _links,
    QRCTL_API_URL: _apiUrl,
    QRCTL_API_KEY: _apiKey,
    DATA_DIR: _dataDir,
    ...rest
  } = process.env;
  return rest;
})();

/** How one qrctl run ended. */
export interface QrctlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface QrctlOptions {
  /** Compiled unless told otherwise. */
  bin?: keyof typeof QRCTL_BIN;
  cwd?: string;
  /** Added to QRCTL_FREE_ENV. */
  env?: Record<string, string>;
  /** The whole environment instead, for a run that must see nothing of the test run's. */
  onlyEnv?: Record<string, string>;
  /** 20 s unless told otherwise; 0 waits however long it takes. */
  timeoutMs?: number;
}

/** Runs qrctl to its end; the exit code is -1 when it was killed. */
export function runQrctl(args: readonly string[], options: QrctlOptions = {}): Promise<QrctlResult> {
  const env = options.onlyEnv ?? { ...QRCTL_FREE_ENV, ...options.env };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [QRCTL_BIN[options.bin ?? "compiled"], ...args],
      { cwd: options.cwd, env, timeout: options.timeoutMs ?? 20_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** Parses a run's stdout, failing the test (with stderr shown) unless it succeeded silently on stderr. */
export function qrctlJson(result: QrctlResult): any {
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout);
}

/** A qrctl run still going, for tests that watch its progress or kill it. */
export interface RunningQrctl {
  readonly child: ChildProcess;
  /** The exit code, or the signal that ended it. */
  readonly exited: Promise<number | string>;
  stdout(): string;
  stderr(): string;
}

/** Starts qrctl and collects what it prints; it runs until it ends or the test kills it. */
export function startQrctl(args: readonly string[], options: Omit<QrctlOptions, "timeoutMs"> = {}): RunningQrctl {
  const child = spawn(process.execPath, [QRCTL_BIN[options.bin ?? "compiled"], ...args], {
    cwd: options.cwd,
    env: options.onlyEnv ?? { ...QRCTL_FREE_ENV, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")),
  );
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}
