// The separate-processes shape as a user runs it on one machine: deploy/local/run-services.sh against a
// PostgreSQL database, on ports of its own (PORT_OFFSET), with accounts and keys made through
// tenancy's admin API, as qrctl makes them.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { createClient } from "@connectrpc/connect";
import { SubscriptionTier, TenancyAdminService } from "@qrplatform/api/tenancy";
import { remoteTransport } from "@qrplatform/platform";
import { localPorts } from "@qrplatform/platform/layout";
import { credentials } from "./credentials.js";
import { REPO_ROOT } from "./processes.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One running deploy/local/run-services.sh and what it printed. */
export interface LocalServices {
  readonly child: ChildProcess;
  readonly offset: number;
  /** The edge's origin: the REST API is under /api/v1, the console under /console/. */
  readonly edgeUrl: string;
  readonly tenancyUrl: string;
  /** Everything the runner and its processes printed so far. */
  output(): string;
  /** Resolves once `condition` holds; fails if the runner exits first or `timeoutMs` passes. */
  waitFor(what: string, condition: () => Promise<boolean>, timeoutMs?: number): Promise<void>;
  /** Resolves once the edge answers /readyz with 200, and fails after `timeoutMs` (two minutes) without it. */
  ready(timeoutMs?: number): Promise<void>;
  /** A new account of the plan with an API key of every scope, made through tenancy's admin API. */
  apiKey(name: string, tier?: SubscriptionTier): Promise<string>;
  /** SIGTERM: the runner stops each of its processes and exits once they have. */
  stop(): Promise<void>;
}

function canListen(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A PORT_OFFSET whose every port is free, below the ephemeral range, and not within 1,500 of `avoid`'s. */
export async function freePortOffset(avoid?: number): Promise<number> {
  for (;;) {
    const offset = 2_000 + 100 * Math.floor(Math.random() * 200);
    if (avoid !== undefined && Math.abs(offset - avoid) < 1_500) continue;
    const { ports, redirectPort, metricsPorts } = localPorts(offset);
    const all = [...Object.values(ports), ...Object.values(metricsPorts), redirectPort];
    if ((await Promise.all(all.map(canListen))).every(Boolean)) return offset;
  }
}

/**
 * Starts deploy/local/run-services.sh on `databaseUrl` with the test credentials; `env` reaches every
 * process, as settings on the runner's command line do. It does not wait: call `ready()`.
 */
export function startLocalServices(options: {
  offset: number;
  databaseUrl: string;
  dataDir: string;
  env?: Record<string, string>;
}): LocalServices {
  let output = "";
  const child = spawn("bash", ["deploy/local/run-services.sh"], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: options.databaseUrl,
      DATA_DIR: options.dataDir,
      PORT_OFFSET: String(options.offset),
      LOG_LEVEL: "warn",
      SERVICE_TOKEN: credentials.serviceToken,
      ADMIN_TOKEN: credentials.adminToken,
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const { ports } = localPorts(options.offset);
  const edgeUrl = `http://127.0.0.1:${ports.edge}`;
  const tenancyUrl = `http://127.0.0.1:${ports.tenancy}`;

  async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition().catch(() => false))) {
      if (child.exitCode !== null) throw new Error(`the runner exited while waiting for ${what}:\n${output}`);
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}:\n${output}`);
      await sleep(200);
    }
  }

  return {
    child,
    offset: options.offset,
    edgeUrl,
    tenancyUrl,
    output: () => output,
    waitFor,
    ready: (timeoutMs) =>
      waitFor("the stack ready", async () => (await fetch(`${edgeUrl}/readyz`)).status === 200, timeoutMs),
    async apiKey(name, tier = SubscriptionTier.SCALE) {
      const admin = createClient(
        TenancyAdminService,
        remoteTransport({ baseUrl: tenancyUrl, token: credentials.adminToken }),
      );
      const { account } = await admin.createAccount({ name, subscriptionTier: tier });
      return (await admin.createApiKey({ accountId: account!.id })).secret;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
