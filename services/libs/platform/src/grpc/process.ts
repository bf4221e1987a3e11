import { z } from "zod";
import { logLevelVar, portVar, readConfig, secretVar } from "../config.js";
import { createLogger, type Logger } from "../logger.js";
import { noMetrics, processMetrics, type Metrics } from "../metrics/metrics.js";
import { metricsEnv, serveMetrics } from "../metrics/metrics-server.js";
import { onShutdownSignal } from "../shutdown.js";
import { startProcess } from "../process-start.js";
import type { InternalCredentials } from "./credentials.js";
import type { Readiness } from "./readiness.js";
import { listenGrpc, type GrpcModule } from "./server.js";

/** The environment every standalone gRPC service reads. */
export const grpcServiceEnv = z
  .object({
    GRPC_HOST: z.string().default("0.0.0.0"),
    GRPC_PORT: portVar(9090),
    SERVICE_TOKEN: secretVar(),
    ADMIN_TOKEN: secretVar(),
    LOG_LEVEL: logLevelVar(),
  })
  .merge(metricsEnv);

/** What a service's main.ts starts: its modules and whatever must be closed after the server stops. */
export interface StartedService {
  modules: GrpcModule[];
  /**
   * What the modules depend on, such as the database: the server answers UNAVAILABLE for their
   * outages and reports NOT_SERVING while one is away. Its checks stop before `close`.
   */
  readiness?: Readiness;
  close(): Promise<void>;
}

/**
 * The life of one standalone gRPC service process: tune the heap, start tracing, read config, start, listen, and on SIGTERM drain
 * in-flight calls before closing resources. Each service's main.ts is a call to this.
 */
export async function runGrpcService<Schema extends z.ZodObject>(options: {
  service: string;
  env: Schema;
  /**
   * Starts the modules; `metrics` is the process's registry, for the features' own instruments.
   * `stopping` aborts when a shutdown signal arrives first, ending a wait for the database.
   */
  start: (
    config: z.infer<Schema> & z.infer<typeof grpcServiceEnv>,
    logger: Logger,
    metrics: Metrics,
    stopping: AbortSignal,
  ) => Promise<StartedService>;
}): Promise<void> {
  startProcess({ service: options.service });
  const config = readConfig(grpcServiceEnv.extend(options.env.shape)) as z.infer<Schema> &
    z.infer<typeof grpcServiceEnv>;
  const logger = createLogger({ service: options.service, level: config.LOG_LEVEL });
  const credentials: InternalCredentials = { serviceToken: config.SERVICE_TOKEN, adminToken: config.ADMIN_TOKEN };
  // Without a port nothing is counted either: instruments cost nothing when nobody reads them.
  const metrics = config.METRICS_PORT === undefined ? noMetrics : processMetrics();
  // The ports first, so a busy one is reported at once; while the modules start (waiting out a
  // database outage, say) the gRPC port answers health checks: alive, not ready.
  const grpc = await listenGrpc({ logger, host: config.GRPC_HOST, port: config.GRPC_PORT });
  const metricsServer =
    config.METRICS_PORT === undefined
      ? undefined
      : await serveMetrics({ metrics, host: config.METRICS_HOST, port: config.METRICS_PORT, logger });
  const stopping = new AbortController();
  const starting = options.start(config, logger, metrics, stopping.signal);
  onShutdownSignal(logger, async () => {
    stopping.abort();
    await grpc.close();
    const started = await starting.catch(() => undefined);
    started?.readiness?.close();
    await started?.close();
    // Last, so the drain itself can still be scraped.
    await metricsServer?.close();
  });
  let started: StartedService;
  try {
    started = await starting;
  } catch (error) {
    // A shutdown during the start ends it; the shutdown handler exits.
    if (stopping.signal.aborted) return;
    throw error;
  }
  if (stopping.signal.aborted) return;
  grpc.serve({ modules: started.modules, credentials, readiness: started.readiness, metrics });
}
