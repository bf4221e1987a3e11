// `npm start` as a user runs it: the embedded platform as a child process, and qrctl beside it.
import { exitWithin, REPO_ROOT, spawnService } from "./processes.js";
import { runQrctl, type QrctlResult } from "./qrctl.js";

/** A running `npm start`. */
export interface PlatformProcess {
  apiUrl: string;
  /** Everything it printed so far. */
  output(): string;
  /** Sends SIGTERM and resolves with the exit code; fails if it has not exited within 30 s. */
  stop(): Promise<number | string>;
  /** Kills it with SIGKILL, as an out-of-memory killer would, and resolves once it is gone. */
  kill(): Promise<number | string>;
}

/**
 * How the platform and qrctl are run: from the sources through tsx, as `npm start` and `npx qrctl` do in
 * a checkout, or compiled (dist/, built by the test run's global setup), which starts without compiling
 * the sources again and is what tests of behaviour across restarts use.
 */
export type Launch = "sources" | "compiled";

/** Starts the embedded platform on DATA_DIR (and DATABASE_URL: the one given, else the test run's) and waits for its banner. */
export async function startPlatformProcess(
  dataDir: string,
  extraEnv: Record<string, string> = {},
  launch: Launch = "compiled",
): Promise<PlatformProcess> {
  const env: Record<string, string> = { DATA_DIR: dataDir, PORT: "0", GRPC_PORT: "0", LOG_LEVEL: "warn", ...extraEnv };
  if (process.env.DATABASE_URL && !extraEnv.DATABASE_URL) env.DATABASE_URL = process.env.DATABASE_URL;
  const platform = spawnService(launch === "sources" ? "services/embedded/src/main.ts" : "dist/embedded.js", env);
  const stop = () => {
    platform.child.kill("SIGTERM");
    return exitWithin(platform, 30_000);
  };
  const deadline = Date.now() + 60_000;
  while (!/REST API\s+(\S+)/.test(platform.output()) && Date.now() < deadline && platform.child.exitCode === null) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const apiUrl = /REST API\s+(\S+)/.exec(platform.output())?.[1];
  if (!apiUrl) {
    await stop();
    throw new Error(`npm start did not print its API URL:\n${platform.output()}`);
  }
  const kill = () => {
    platform.child.kill("SIGKILL");
    return exitWithin(platform, 30_000);
  };
  return { apiUrl, output: platform.output, stop, kill };
}

/** Runs `qrctl` from the repository root with the platform's DATA_DIR; from the sources, the way `npx qrctl` does. */
export function qrctl(dataDir: string, args: string[], launch: Launch = "compiled"): Promise<QrctlResult> {
  return runQrctl(args, {
    bin: launch,
    cwd: REPO_ROOT,
    onlyEnv: { PATH: process.env.PATH ?? "", DATA_DIR: dataDir },
    timeoutMs: 0,
  });
}

/** A new account and an API key with every scope, made with qrctl. */
export async function accountWithKey(
  dataDir: string,
  launch: Launch = "compiled",
): Promise<{ accountId: string; key: string }> {
  const account = await qrctl(dataDir, ["accounts", "create", "--name", "Acme", "--plan", "origin", "--json"], launch);
  if (account.code !== 0) throw new Error(account.stderr);
  const { id: accountId } = JSON.parse(account.stdout) as { id: string };
  const key = await qrctl(dataDir, ["keys", "create", "--account", accountId, "--json"], launch);
  if (key.code !== 0) throw new Error(key.stderr);
  return { accountId, key: (JSON.parse(key.stdout) as { key: string }).key };
}

/** Calls the REST API of a running platform with an API key and answers the parsed JSON body. */
export function apiCaller(
  apiUrl: () => string,
  key: string,
): (method: string, path: string, body?: unknown) => Promise<any> {
  return async (method, path, body) => {
    const res = await fetch(`${apiUrl()}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return res.json();
  };
}
