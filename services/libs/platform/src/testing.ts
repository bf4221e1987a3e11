// Helpers for tests that run processes of their own: free ports, and a Redis to stop and start.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";

/** Whether a `redis-server` binary is on the PATH (`npm test` installs one when it can). */
export const hasRedisServer = (): boolean => spawnSync("redis-server", ["--version"]).status === 0;

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A Redis of the test's own on this port, so stopping it disturbs nothing else. */
export async function startRedis(port: number): Promise<ChildProcess> {
  const redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "pipe" });
  await new Promise<void>((resolve, reject) => {
    redis.once("error", reject);
    redis.once("exit", (code) => reject(new Error(`redis-server exited with ${code}`)));
    redis.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("Ready to accept connections") && resolve());
  });
  return redis;
}

/** Kills a Redis at once, as a crash would. */
export async function killRedis(redis: ChildProcess): Promise<void> {
  if (redis.exitCode !== null || redis.signalCode !== null) return;
  const exited = new Promise((resolve) => redis.once("exit", resolve));
  redis.kill("SIGKILL");
  await exited;
}
