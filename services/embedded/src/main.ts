// `npm start`: the whole platform in one process. Configuration: see docs/configuration.md.
import { z } from "zod";
import { databaseEnv } from "@qrplatform/db";
import {
  createLogger,
  logLevelVar,
  metricsPortVar,
  onShutdownSignal,
  optionalVar,
  portVar,
  readConfig,
  startProcess,
} from "@qrplatform/platform";
import { webhookEnv, webhookOptionsFromEnv } from "@qrplatform/catalog";
import { consoleDirFromEnv, consoleEnv } from "@qrplatform/edge";
import { redirectPathEnv, resolverTxtLookup } from "@qrplatform/links";
import { startPlatform } from "./platform.js";

startProcess({ service: "qr-platform" });
const config = readConfig(
  databaseEnv
    .merge(redirectPathEnv)
    .merge(webhookEnv)
    .merge(consoleEnv)
    .extend({
      HOST: z.string().default("127.0.0.1"),
      PORT: portVar(8080),
      GRPC_HOST: z.string().default("127.0.0.1"),
      GRPC_PORT: portVar(9090),
      METRICS_HOST: z.string().default("127.0.0.1"),
      METRICS_PORT: metricsPortVar(),
      SHORT_LINK_BASE_URL: optionalVar(z.string().url()),
      CUSTOM_DOMAIN_SCHEME: z.enum(["https", "http"]).default("https"),
      DNS_RESOLVER: optionalVar(z.string()),
      SCAN_RETENTION_DAYS: optionalVar(z.coerce.number().int().min(0).max(36_500)),
      RENDER_CACHE_BYTES: optionalVar(z.coerce.number().int().min(1)),
      RENDER_CONCURRENCY: optionalVar(z.coerce.number().int().min(1)),
      RENDER_CONCURRENCY_PER_ACCOUNT: optionalVar(z.coerce.number().int().min(1)),
      RENDER_QUEUE_PER_ACCOUNT: optionalVar(z.coerce.number().int().min(0)),
      LOG_LEVEL: logLevelVar(),
    }),
);
const logger = createLogger({ service: "embedded", level: config.LOG_LEVEL });

const platform = await startPlatform({
  dataDir: config.DATA_DIR,
  databaseUrl: config.DATABASE_URL,
  host: config.HOST,
  port: config.PORT,
  grpcHost: config.GRPC_HOST,
  grpcPort: config.GRPC_PORT,
  metricsHost: config.METRICS_HOST,
  metricsPort: config.METRICS_PORT,
  shortLinkBaseUrl: config.SHORT_LINK_BASE_URL,
  customDomainScheme: config.CUSTOM_DOMAIN_SCHEME,
  lookupTxt: resolverTxtLookup({ server: config.DNS_RESOLVER }),
  trustedProxies: config.TRUSTED_PROXIES,
  countryHeader: config.COUNTRY_HEADER,
  scanSpoolDir: config.SCAN_SPOOL_DIR,
  scanRetentionDays: config.SCAN_RETENTION_DAYS,
  scanRecordingThread: config.SCAN_RECORDING_THREAD === "true",
  rendering: {
    cacheBytes: config.RENDER_CACHE_BYTES,
    concurrency: config.RENDER_CONCURRENCY,
    concurrencyPerAccount: config.RENDER_CONCURRENCY_PER_ACCOUNT,
    queuedPerAccount: config.RENDER_QUEUE_PER_ACCOUNT,
  },
  webhooks: webhookOptionsFromEnv(config),
  consoleDir: consoleDirFromEnv(config),
  logger,
});
onShutdownSignal(logger, () => platform.close());

process.stdout.write(`
qr-platform is running.
  REST API   ${platform.apiUrl}   (reference: ${platform.apiUrl.replace(/\/api\/v1$/, "")}/docs)
  console    ${config.CONSOLE_ENABLED === "true" ? `${platform.apiUrl.replace(/\/api\/v1$/, "")}/console/` : "off (CONSOLE_ENABLED=false)"}
  Short links ${platform.shortLinkBaseUrl}/<slug>
  gRPC       ${platform.grpcUrl}  (admin credential in ${platform.adminCredentialPath})
  metrics    ${platform.metricsUrl ?? "off (METRICS_PORT=off)"}
  data       ${config.DATABASE_URL ? "Postgres at DATABASE_URL" : `${config.DATA_DIR}/pglite`}

Create an account and an API key, then call the API:
  npx qrctl accounts create --name "Acme" --plan origin
  npx qrctl keys create --account <account id>
  curl -H "Authorization: Bearer <key>" ${platform.apiUrl}/account

`);
