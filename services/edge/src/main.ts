// The REST edge as its own process, calling tenancy and catalog over gRPC. Configuration: see docs/configuration.md.
import { z } from "zod";
import {
  createLogger,
  listenHttp,
  logLevelVar,
  metricsEnv,
  optionalVar,
  onShutdownSignal,
  noMetrics,
  portVar,
  processMetrics,
  readConfig,
  redisAccessChanges,
  remoteTransport,
  secretVar,
  startProcess,
  serveMetrics,
} from "@qrplatform/platform";
import { DEFAULT_IN_FLIGHT_WAIT_MS } from "./http/idempotency.js";
import { memoryQuotaStore, redisQuotaStore } from "./http/quota.js";
import {
  buildEdge,
  consoleDirFromEnv,
  consoleEnv,
  DEFAULT_EXPORT_CACHE_BYTES,
  DEFAULT_MAX_BODY_BYTES,
} from "./server.js";

startProcess({ service: "edge" });
const config = readConfig(
  z
    .object({
      HOST: z.string().default("0.0.0.0"),
      PORT: portVar(8080),
      TENANCY_URL: z.string().url(),
      CATALOG_URL: z.string().url(),
      LINKS_URL: z.string().url(),
      RENDERING_URL: z.string().url(),
      REDIS_URL: optionalVar(z.string().url()),
      PUBLIC_BASE_URL: optionalVar(z.string().url()),
      SHORT_LINK_BASE_URL: optionalVar(z.string().url()),
      SERVICE_TOKEN: secretVar(),
      MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_MAX_BODY_BYTES),
      IDEMPOTENCY_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(DEFAULT_IN_FLIGHT_WAIT_MS),
      EXPORT_CACHE_BYTES: z.coerce.number().int().min(0).default(DEFAULT_EXPORT_CACHE_BYTES),
      LOG_LEVEL: logLevelVar(),
    })
    .merge(metricsEnv)
    .merge(consoleEnv),
);
const logger = createLogger({ service: "edge", level: config.LOG_LEVEL });
const remote = (baseUrl: string) => remoteTransport({ baseUrl, token: config.SERVICE_TOKEN });

// Without Redis every replica counts alone; that is only right for a single edge.
const quotas = config.REDIS_URL ? await redisQuotaStore(config.REDIS_URL, logger) : memoryQuotaStore();
if (!config.REDIS_URL) logger.warn("REDIS_URL is not set: hourly quotas are counted per edge process");

// Tenancy announces revoked keys and changed accounts here; without Redis no announcement reaches this
// process, so every request asks tenancy.
const accessChanges = config.REDIS_URL ? await redisAccessChanges(config.REDIS_URL, logger) : undefined;

const metrics = config.METRICS_PORT === undefined ? noMetrics : processMetrics();
const metricsServer =
  config.METRICS_PORT === undefined
    ? undefined
    : await serveMetrics({ metrics, host: config.METRICS_HOST, port: config.METRICS_PORT, logger });

let draining = false;
const app = buildEdge({
  transports: {
    tenancy: remote(config.TENANCY_URL),
    catalog: remote(config.CATALOG_URL),
    links: remote(config.LINKS_URL),
    rendering: remote(config.RENDERING_URL),
  },
  publicBaseUrl: config.PUBLIC_BASE_URL?.replace(/\/$/, ""),
  shortLinkBaseUrl: config.SHORT_LINK_BASE_URL?.replace(/\/$/, ""),
  logger,
  maxBodyBytes: config.MAX_BODY_BYTES,
  isDraining: () => draining,
  quotas,
  metrics,
  idempotency: { inFlightWaitMs: config.IDEMPOTENCY_WAIT_MS },
  accessChanges,
  exportCacheBytes: config.EXPORT_CACHE_BYTES,
  consoleDir: consoleDirFromEnv(config),
});
const server = await listenHttp({ handler: app, host: config.HOST, port: config.PORT, logger, name: "REST edge" });

onShutdownSignal(logger, async () => {
  draining = true;
  await server.close();
  await quotas.close();
  await accessChanges?.close();
  await metricsServer?.close();
});
