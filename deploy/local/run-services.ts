// Runs every process of the platform side by side on this machine, talking gRPC to each other,
// against the PostgreSQL database in DATABASE_URL (each service in its own schema), as the process
// layout (@qrplatform/platform/layout) describes them. Ctrl-C stops them all gracefully.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { LOCAL_REDIRECT_PORT, PROCESSES, processEnvironment, START_ORDER, type InternalSecret } from "@qrplatform/platform/layout";

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error("set DATABASE_URL to a PostgreSQL database, e.g. postgres://postgres@127.0.0.1:5432/qrplatform");
  process.exit(2);
}
const secret = (name: InternalSecret) => process.env[name] ?? randomBytes(32).toString("base64url");
const secrets = {
  SERVICE_TOKEN: secret("SERVICE_TOKEN"),
  ADMIN_TOKEN: secret("ADMIN_TOKEN"),
  PAGE_TOKEN_SECRET: secret("PAGE_TOKEN_SECRET"),
  VISITOR_KEY_SECRET: secret("VISITOR_KEY_SECRET"),
};
const ports = Object.fromEntries(START_ORDER.map((name) => [name, PROCESSES[name].localPort])) as Record<keyof typeof PROCESSES, number>;
if (process.env.PORT) ports.edge = Number(process.env.PORT);
const placement = {
  host: "127.0.0.1",
  ports,
  redirectPort: LOCAL_REDIRECT_PORT,
  metricsPorts: Object.fromEntries(START_ORDER.map((name) => [name, PROCESSES[name].localMetricsPort])) as Record<keyof typeof PROCESSES, number>,
  shortLinkBaseUrl: process.env.SHORT_LINK_BASE_URL,
  secrets,
  databaseUrl,
  redisUrl: process.env.REDIS_URL,
  dataDir: process.env.DATA_DIR ?? ".data",
};

const children: ChildProcess[] = START_ORDER.map((name) =>
  spawn(process.execPath, ["--import", "tsx", PROCESSES[name].entry], {
    env: { PATH: process.env.PATH, LOG_LEVEL: process.env.LOG_LEVEL ?? "info", ...processEnvironment(name, placement) },
    stdio: "inherit",
    // Their own process group: Ctrl-C reaches this runner alone, which stops each of them once.
    detached: true,
  }),
);

console.error(`
REST API on http://127.0.0.1:${ports.edge}/api/v1, short links on http://127.0.0.1:${LOCAL_REDIRECT_PORT}
Prometheus metrics on ${START_ORDER.map((name) => `${name} :${placement.metricsPorts[name]}`).join(", ")} (/metrics)
For qrctl in another terminal (tenancy and links each have their own address):
  export QRCTL_TENANCY_ADDRESS=http://127.0.0.1:${ports.tenancy} QRCTL_LINKS_ADDRESS=http://127.0.0.1:${ports.links} QRCTL_TOKEN=${secrets.ADMIN_TOKEN}
`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  for (const child of children) child.kill("SIGTERM");
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
// One process ending stops the rest: a half-running platform only confuses.
for (const child of children) child.once("exit", stop);
await Promise.all(children.map((child) => (child.exitCode === null && child.signalCode === null ? once(child, "exit") : undefined)));
