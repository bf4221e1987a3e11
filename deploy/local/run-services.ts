// Runs every process of the platform side by side on this machine, talking gRPC to each other,
// against the PostgreSQL database in DATABASE_URL (each service in its own schema), as the process
// layout (@qrplatform/platform/layout) describes them. Like a process supervisor, it restarts a
// process that exits (with backoff) while the others keep serving, except one that could not start
// because of its configuration or a taken port; Ctrl-C or SIGTERM stops them all
// gracefully.
//
// Every process gets this runner's environment, so any documented setting given on its command line
// (WEBHOOK_ALLOW_LOOPBACK, OTEL_EXPORTER_OTLP_ENDPOINT, ...) reaches the processes that read it; the
// layout's own variables (ports, addresses, secrets) are set on top. PORT_OFFSET moves every local
// port, so that two stacks run side by side; PORT still chooses the edge's port alone.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { STARTUP_FAILURE_EXIT_CODE } from "@qrplatform/platform";
import {
  localPorts,
  processEnvironment,
  START_ORDER,
  PROCESSES,
  type InternalSecret,
  type Placement,
  type ProcessName,
} from "@qrplatform/platform/layout";

const log = (message: string) => console.error(`[run-services] ${message}`);

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error("set DATABASE_URL to a PostgreSQL database, e.g. postgres://postgres@127.0.0.1:5432/qrplatform");
  process.exit(2);
}
const offset = Number(process.env.PORT_OFFSET ?? 0);
let local: ReturnType<typeof localPorts>;
try {
  local = localPorts(offset);
} catch (error) {
  console.error(`PORT_OFFSET: ${(error as Error).message} Use a whole number such as 100.`);
  process.exit(2);
}
const secret = (name: InternalSecret) => process.env[name] ?? randomBytes(32).toString("base64url");
const secrets = {
  SERVICE_TOKEN: secret("SERVICE_TOKEN"),
  ADMIN_TOKEN: secret("ADMIN_TOKEN"),
  PAGE_TOKEN_SECRET: secret("PAGE_TOKEN_SECRET"),
  VISITOR_KEY_SECRET: secret("VISITOR_KEY_SECRET"),
};
const ports = { ...local.ports, ...(process.env.PORT && { edge: Number(process.env.PORT) }) };
const placement: Placement = {
  host: "127.0.0.1",
  ports,
  redirectPort: local.redirectPort,
  metricsPorts: local.metricsPorts,
  shortLinkBaseUrl: process.env.SHORT_LINK_BASE_URL,
  secrets,
  databaseUrl,
  redisUrl: process.env.REDIS_URL,
  dataDir: process.env.DATA_DIR ?? ".data",
};

/** The first wait before restarting a process that exited; it doubles with each quick exit, up to the longest. */
const FIRST_RESTART_MS = 1_000;
const LONGEST_RESTART_MS = 30_000;
/** A process that ran this long before exiting is restarted after the first wait again. */
const STEADY_MS = 60_000;

/** One process of the platform, restarted whenever it exits until the runner stops. */
class Supervised {
  child: ChildProcess | undefined;
  #delay = FIRST_RESTART_MS;
  #restart: NodeJS.Timeout | undefined;

  constructor(readonly name: ProcessName) {}

  start(): void {
    const startedAt = Date.now();
    const child = spawn(process.execPath, ["--import", "tsx", PROCESSES[this.name].entry], {
      env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? "info", ...processEnvironment(this.name, placement) },
      stdio: "inherit",
      // Their own process group: Ctrl-C reaches this runner alone, which stops each of them once.
      detached: true,
    });
    this.child = child;
    log(`${this.name} started (pid ${child.pid})`);
    child.once("exit", (code, signal) => {
      if (stopping) return;
      // A taken port or a setting that is not valid fails the same way on every try: the process
      // named what to change, and restarting it would only repeat that line every 30 s.
      if (code === STARTUP_FAILURE_EXIT_CODE) {
        log(
          `${this.name} could not start (status ${code}); not restarting it: change what it named, then start the runner again`,
        );
        return;
      }
      if (Date.now() - startedAt >= STEADY_MS) this.#delay = FIRST_RESTART_MS;
      log(
        `${this.name} exited (${signal ?? `status ${code}`}); restarting it in ${this.#delay / 1000} s, the others keep running`,
      );
      this.#restart = setTimeout(() => this.start(), this.#delay);
      this.#delay = Math.min(this.#delay * 2, LONGEST_RESTART_MS);
    });
  }

  /** Stops it (SIGTERM, so it drains) and resolves once it has exited; a pending restart is cancelled. */
  async stop(): Promise<void> {
    clearTimeout(this.#restart);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
}

let stopping = false;
const processes = START_ORDER.map((name) => new Supervised(name));
for (const supervised of processes) supervised.start();

console.error(`
REST API on http://127.0.0.1:${ports.edge}/api/v1, short links on http://127.0.0.1:${placement.redirectPort}
Prometheus metrics on ${START_ORDER.map((name) => `${name} :${local.metricsPorts[name]}`).join(", ")} (/metrics)
For qrctl in another terminal (tenancy and links each have their own address):
  export QRCTL_TENANCY_ADDRESS=http://127.0.0.1:${ports.tenancy} QRCTL_LINKS_ADDRESS=http://127.0.0.1:${ports.links} QRCTL_TOKEN=${secrets.ADMIN_TOKEN}
`);

const stop = async (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  log(`${signal}: stopping every process`);
  await Promise.all(processes.map((supervised) => supervised.stop()));
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
