// The platform's processes: what each one is, where it listens when they run side by side, whom it
// calls and what it must be told. The one description that the build, the local runner, the test
// stack and the chart's test read; a new process is added here, once.

/** The gRPC services. */
export type ServiceName = "tenancy" | "catalog" | "links" | "rendering";
/** Every process of the separate-processes shape. */
export type ProcessName = ServiceName | "edge";
/** The internal secrets processes are given (see docs/configuration.md). */
export type InternalSecret = "SERVICE_TOKEN" | "ADMIN_TOKEN" | "PAGE_TOKEN_SECRET" | "VISITOR_KEY_SECRET";

/** One process of the platform. */
export interface ProcessSpec {
  /** Its TypeScript entry point, relative to the repository root; `npm run build` makes dist/<name>.js of it. */
  readonly entry: string;
  /** Its port when the processes run side by side on one machine: gRPC for a service, HTTP for the edge. */
  readonly localPort: number;
  /** Its Prometheus /metrics port when the processes run side by side (alone on a host, each uses 9464). */
  readonly localMetricsPort: number;
  /** The services it calls, each reached at <NAME>_URL. */
  readonly calls: readonly ServiceName[];
  /** Whether it keeps data in PostgreSQL (DATABASE_URL; its own schema). */
  readonly database: boolean;
  /** Whether it shares state with its replicas through Redis when REDIS_URL is set. */
  readonly redis: boolean;
  /** The internal secrets it reads. */
  readonly secrets: readonly InternalSecret[];
}

const SERVICE_SECRETS = ["SERVICE_TOKEN", "ADMIN_TOKEN"] as const;

export const PROCESSES: Readonly<Record<ProcessName, ProcessSpec>> = {
  tenancy: {
    entry: "services/tenancy/src/main.ts",
    localPort: 9091,
    localMetricsPort: 9464,
    calls: [],
    database: true,
    // Announces key and account changes to every edge's cache of authenticated keys.
    redis: true,
    secrets: [...SERVICE_SECRETS, "PAGE_TOKEN_SECRET"],
  },
  links: {
    entry: "services/links/src/main.ts",
    localPort: 9092,
    localMetricsPort: 9465,
    calls: [],
    database: true,
    redis: true,
    secrets: [...SERVICE_SECRETS, "PAGE_TOKEN_SECRET", "VISITOR_KEY_SECRET"],
  },
  rendering: {
    entry: "services/rendering/src/main.ts",
    localPort: 9093,
    localMetricsPort: 9466,
    calls: [],
    database: false,
    redis: false,
    secrets: SERVICE_SECRETS,
  },
  catalog: {
    entry: "services/catalog/src/main.ts",
    localPort: 9094,
    localMetricsPort: 9467,
    calls: ["tenancy", "links", "rendering"],
    database: true,
    // Hears the links service announce stored scans, so it keeps scan totals between them.
    redis: true,
    secrets: [...SERVICE_SECRETS, "PAGE_TOKEN_SECRET"],
  },
  edge: {
    entry: "services/edge/src/main.ts",
    localPort: 8080,
    localMetricsPort: 9468,
    calls: ["tenancy", "catalog", "links", "rendering"],
    database: false,
    redis: true,
    secrets: ["SERVICE_TOKEN"],
  },
};

/** Every process after the services it calls, so each finds its dependencies listening. */
export const START_ORDER: readonly ProcessName[] = ["tenancy", "links", "rendering", "catalog", "edge"];

/** The local port of the links service's redirector, beside its gRPC port. */
export const LOCAL_REDIRECT_PORT = 8081;

/** Where the processes run and what they share: what {@link processEnvironment} fills in. */
export interface Placement {
  /** The address every process listens on and calls the others at, such as 127.0.0.1. */
  readonly host: string;
  /** Each process's port (gRPC for services, HTTP for the edge). */
  readonly ports: Readonly<Record<ProcessName, number>>;
  /** The links service's redirector port. */
  readonly redirectPort: number;
  /** Each process's /metrics port; each uses its default (9464) when unset. */
  readonly metricsPorts?: Readonly<Record<ProcessName, number>>;
  /** The short domain links are made on; by default the redirector's own address. */
  readonly shortLinkBaseUrl?: string;
  readonly secrets: Readonly<Record<InternalSecret, string>>;
  /** PostgreSQL for the services that keep data; each uses PGlite under DATA_DIR without it. */
  readonly databaseUrl?: string;
  readonly redisUrl?: string;
  readonly dataDir: string;
}

/** The environment one process needs to run in this placement (docs/configuration.mds say what each variable means). */
export function processEnvironment(name: ProcessName, placement: Placement): Record<string, string> {
  const spec = PROCESSES[name];
  const url = (service: ServiceName) => `http://${placement.host}:${placement.ports[service]}`;
  const env: Record<string, string> =
    name === "edge"
      ? { HOST: placement.host, PORT: String(placement.ports.edge) }
      : { GRPC_HOST: placement.host, GRPC_PORT: String(placement.ports[name]), DATA_DIR: placement.dataDir };
  if (placement.metricsPorts) {
    env.METRICS_HOST = placement.host;
    env.METRICS_PORT = String(placement.metricsPorts[name]);
  }
  for (const service of spec.calls) env[`${service.toUpperCase()}_URL`] = url(service);
  for (const secret of spec.secrets) env[secret] = placement.secrets[secret];
  if (spec.database && placement.databaseUrl) env.DATABASE_URL = placement.databaseUrl;
  if (spec.redis && placement.redisUrl) env.REDIS_URL = placement.redisUrl;
  const shortLinkBaseUrl = placement.shortLinkBaseUrl ?? `http://${placement.host}:${placement.redirectPort}`;
  if (name === "links") {
    env.REDIRECT_HOST = placement.host;
    env.REDIRECT_PORT = String(placement.redirectPort);
    env.SHORT_LINK_BASE_URL = shortLinkBaseUrl;
  }
  // The edge draws design previews with a placeholder link on the same short domain.
  if (name === "edge") env.SHORT_LINK_BASE_URL = shortLinkBaseUrl;
  return env;
}

/** Where the processes listen when they run side by side on one machine: see {@link localPorts}. */
export interface LocalPorts {
  readonly ports: Readonly<Record<ProcessName, number>>;
  readonly redirectPort: number;
  readonly metricsPorts: Readonly<Record<ProcessName, number>>;
}

/**
 * The local ports (each process's `localPort` and `localMetricsPort`, and the redirector's
 * {@link LOCAL_REDIRECT_PORT}), each moved up by `offset`, so a second stack runs beside the first
 * (an offset of 100 moves 8080 to 8180, 9091 to 9191) and a busy range can be avoided. Throws a
 * RangeError when a port would leave 1–65535.
 */
export function localPorts(offset = 0): LocalPorts {
  const names = Object.keys(PROCESSES) as ProcessName[];
  const ports = Object.fromEntries(names.map((name) => [name, PROCESSES[name].localPort + offset])) as Record<
    ProcessName,
    number
  >;
  const metricsPorts = Object.fromEntries(
    names.map((name) => [name, PROCESSES[name].localMetricsPort + offset]),
  ) as Record<ProcessName, number>;
  const redirectPort = LOCAL_REDIRECT_PORT + offset;
  const all = [...Object.values(ports), ...Object.values(metricsPorts), redirectPort];
  if (!Number.isInteger(offset) || all.some((port) => port < 1 || port > 65_535)) {
    throw new RangeError(`A port offset of ${offset} moves the local ports outside 1-65535.`);
  }
  return { ports, redirectPort, metricsPorts };
}
