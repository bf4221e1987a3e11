// Test support: a service's main.ts run as its own Node process, the way a container runs it.
import { spawn, type ChildProcess } from "node:child_process";
import { connect } from "node:net";
import { REPO_ROOT } from "./platform.js";

/** A spawned service process with everything it printed. */
export interface ServiceProcess {
  readonly child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** The JSON log lines printed to stdout so far. */
  logLines(): Record<string, unknown>[];
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  readonly exited: Promise<number | string>;
}

/** Runs `entry` (relative to the repository root) with tsx and exactly the given environment plus PATH. */
export function spawnService(entry: string, env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ["--import", "tsx", entry], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
  });
  return {
    child,
    exited,
    output: () => `${stdout}${stderr}`,
    logLines: () =>
      stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** Waits for a log line matching `match`, failing early with the process's output if it exits first. */
export async function waitForLog(
  service: ServiceProcess,
  match: (line: Record<string, unknown>) => boolean,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let exited: number | string | undefined;
  void service.exited.then((code) => (exited = code));
  for (;;) {
    const line = service.logLines().find(match);
    if (line) return line;
    if (exited !== undefined) throw new Error(`The process exited (${exited}) first:\n${service.output()}`);
    if (Date.now() > deadline) throw new Error(`No such log line within ${timeoutMs} ms:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resolves with the exit code, or rejects if the process is still running after `timeoutMs`. */
export function exitWithin(service: ServiceProcess, timeoutMs: number): Promise<number | string> {
  return Promise.race([
    service.exited,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`Still running after ${timeoutMs} ms:\n${service.output()}`)), timeoutMs).unref(),
    ),
  ]);
}

/** Whether a TCP connection to the port is refused. */
export function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}
