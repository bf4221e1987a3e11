// Every process kind, compiled as the container runs it, started with one of its ports taken: it says
// at once, in one line, which address is busy and which variable chooses it, and exits with status 2,
// with no stack trace. The ports are bound before any migration or data load, so this takes no wait.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exitWithin, freePort, spawnService, VISITOR_KEY_SECRET } from "@qrplatform/testing";
import { CREDENTIALS, PAGE_TOKEN_SECRET } from "./support/platform.js";

let dataDir: string;
let taken: Server;
let takenPort: number;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "qrp-busy-port-"));
  takenPort = await freePort();
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(takenPort, "127.0.0.1", resolve));
});

afterAll(async () => {
  await new Promise((resolve) => taken.close(resolve));
  rmSync(dataDir, { recursive: true, force: true });
});

const secrets = {
  SERVICE_TOKEN: CREDENTIALS.serviceToken,
  ADMIN_TOKEN: CREDENTIALS.adminToken,
  PAGE_TOKEN_SECRET,
  VISITOR_KEY_SECRET,
};

/** Each process kind with the environment it needs to start, every port free (0) but the one under test. */
const CASES: { entry: string; variable: string; env: () => Record<string, string> }[] = [
  { entry: "tenancy", variable: "GRPC_PORT", env: () => ({ ...secrets, GRPC_PORT: String(takenPort) }) },
  {
    entry: "catalog",
    variable: "GRPC_PORT",
    env: () => ({ ...secrets, ...upstreams(), GRPC_PORT: String(takenPort) }),
  },
  { entry: "rendering", variable: "GRPC_PORT", env: () => ({ ...secrets, GRPC_PORT: String(takenPort) }) },
  { entry: "links", variable: "GRPC_PORT", env: () => ({ ...secrets, ...linksEnv(), GRPC_PORT: String(takenPort) }) },
  {
    entry: "links",
    variable: "REDIRECT_PORT",
    env: () => ({ ...secrets, ...linksEnv(), GRPC_PORT: "0", REDIRECT_PORT: String(takenPort) }),
  },
  {
    entry: "links",
    variable: "METRICS_PORT",
    env: () => ({ ...secrets, ...linksEnv(), GRPC_PORT: "0", METRICS_PORT: String(takenPort) }),
  },
  {
    entry: "edge",
    variable: "PORT",
    env: () => ({ SERVICE_TOKEN: secrets.SERVICE_TOKEN, ...upstreams(), PORT: String(takenPort) }),
  },
  {
    entry: "embedded",
    variable: "GRPC_PORT",
    env: () => ({ PORT: "0", GRPC_PORT: String(takenPort), METRICS_PORT: "off" }),
  },
  {
    entry: "embedded",
    variable: "PORT",
    env: () => ({ PORT: String(takenPort), GRPC_PORT: "0", METRICS_PORT: "off" }),
  },
];

function upstreams(): Record<string, string> {
  const nowhere = "http://127.0.0.1:1";
  return { TENANCY_URL: nowhere, CATALOG_URL: nowhere, LINKS_URL: nowhere, RENDERING_URL: nowhere };
}

function linksEnv(): Record<string, string> {
  return { REDIRECT_PORT: "0", SHORT_LINK_BASE_URL: "http://127.0.0.1:8081" };
}

describe("a process whose port is taken", () => {
  it.each(CASES)(
    "$entry with $variable taken exits 2 at once, naming the address and the variable",
    async ({ entry, variable, env }) => {
      const service = spawnService(`dist/${entry}.js`, {
        LOG_LEVEL: "info",
        GRPC_HOST: "127.0.0.1",
        HOST: "127.0.0.1",
        REDIRECT_HOST: "127.0.0.1",
        METRICS_HOST: "127.0.0.1",
        METRICS_PORT: "0",
        DATA_DIR: join(dataDir, `${entry}-${variable}`),
        ...env(),
      });
      expect(await exitWithin(service, 30_000)).toBe(2);
      const stderr = service
        .output()
        .split("\n")
        .filter((line) => line !== "" && !line.startsWith("{"));
      expect(stderr).toEqual([
        expect.stringContaining(
          `Cannot listen on 127.0.0.1:${takenPort} (${variable}): the address is already in use; set ${variable} to a free port.`,
        ),
      ]);
      expect(service.output()).not.toMatch(/^\s+at /m);
    },
  );
});
