// The domain operator as its own process (in Kubernetes only): config, telemetry, the operator, its
// health and metrics endpoints, and on SIGTERM the lease released for the other replica.
// Configuration: see docs/configuration.md.
import {
  createLogger,
  onShutdownSignal,
  processMetrics,
  noMetrics,
  readConfig,
  serveMetrics,
  startProcess,
} from "@qrplatform/platform";
import { operatorEnv, periodsOf, provisioningOf } from "./config.js";
import { accountClient, buildOperator, domainClient, loadKubeConfig, serveHealth } from "./operator.js";

startProcess({ service: "operator" });
const config = readConfig(operatorEnv);
const logger = createLogger({ service: "operator", level: config.LOG_LEVEL });
const metrics = config.METRICS_PORT === undefined ? noMetrics : processMetrics();
const credential = { token: config.ADMIN_TOKEN };
if (!config.TENANCY_URL)
  logger.warn(
    "TENANCY_URL is not set: a CustomDomain created with kubectl is registered without checking that its account exists",
  );

const operator = buildOperator({
  kubeConfig: loadKubeConfig(config.KUBECONFIG),
  provisioning: provisioningOf(config),
  domains: domainClient({ baseUrl: config.LINKS_URL, ...credential }),
  accounts: config.TENANCY_URL ? accountClient({ baseUrl: config.TENANCY_URL, ...credential }) : undefined,
  identity: config.POD_NAME,
  lease: { name: config.LEASE_NAME, durationMs: config.LEASE_DURATION_SECONDS * 1000 },
  periods: periodsOf(config),
  logger,
  metrics,
});
const health = await serveHealth({
  readiness: () => operator.readiness(),
  host: config.HEALTH_HOST,
  port: config.HEALTH_PORT,
  logger,
});
const metricsServer =
  config.METRICS_PORT === undefined
    ? undefined
    : await serveMetrics({ metrics, host: config.METRICS_HOST, port: config.METRICS_PORT, logger });
operator.start();

onShutdownSignal(logger, async () => {
  // First, so the other replica takes over while this one winds down.
  await operator.stop();
  await health.close();
  await metricsServer?.close();
});
