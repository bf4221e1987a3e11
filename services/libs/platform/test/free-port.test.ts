// Ports for processes a test starts: never from the range that outgoing connections take theirs from,
// so no client socket can claim one between the pick and the child's listen.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { expect, it } from "vitest";
import { freePort } from "@qrplatform/testing";

const ephemeralStart = (): number => {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
  } catch {
    return 32_768;
  }
};

it("hands out distinct ports below the ephemeral range, even when asked for many at once", async () => {
  const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()));
  expect(new Set(ports).size).toBe(ports.length);
  for (const port of ports) {
    expect(port).toBeGreaterThanOrEqual(1024);
    expect(port).toBeLessThan(ephemeralStart());
  }
});

it("skips a port that something already listens on", async () => {
  const first = await freePort();
  // Occupy the port this worker would hand out next; the helper must step over it.
  const held = createServer();
  await new Promise<void>((resolve) => held.listen(first + 1, "127.0.0.1", resolve));
  try {
    const next = await freePort();
    expect(next).not.toBe(first + 1);
    await new Promise<void>((resolve, reject) => {
      const server = createServer().once("error", reject);
      server.listen(next, "127.0.0.1", () => server.close(() => resolve()));
    });
  } finally {
    await new Promise((resolve) => held.close(resolve));
  }
});
