import { NodeSDK } from "@opentelemetry/sdk-node";
import { DEFAULT_HOT_PATH_RATIO, HotPathSampler, samplerFromEnv } from "./sampler.js";

let sdk: NodeSDK | undefined;

/** Whether this process exports traces; instrumentation does nothing at all while it does not. */
export function tracingEnabled(): boolean {
  return sdk !== undefined;
}

/** True when the environment asks for traces: an OTLP endpoint is set and OTEL_SDK_DISABLED is not "true". */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts OpenTelemetry tracing for this process, configured by the standard OTEL_* variables
 * (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL,
 * OTEL_TRACES_SAMPLER[_ARG], OTEL_BSP_*, OTEL_RESOURCE_ATTRIBUTES), plus TRACES_HOT_PATH_RATIO for
 * redirects and scan batches. Off, at no cost, unless an OTLP endpoint is set. Call it first in a
 * process's main; {@link shutdownTelemetry} flushes what is buffered. Traces only: no metrics or logs
 * are exported through OTLP, and nothing is monkey-patched; the spans come from the platform's own
 * interceptors, middleware and query hook.
 */
export function startTelemetry(options: { service: string }): void {
  if (sdk || !tracingConfigured()) return;
  const ratio = Number(process.env.TRACES_HOT_PATH_RATIO ?? DEFAULT_HOT_PATH_RATIO);
  const started = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME?.trim() || options.service,
    sampler: new HotPathSampler(
      samplerFromEnv(),
      Number.isFinite(ratio) ? Math.min(1, Math.max(0, ratio)) : DEFAULT_HOT_PATH_RATIO,
    ),
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
  });
  started.start();
  sdk = started;
}

/** Exports the spans still buffered and stops tracing; nothing when tracing is off. */
export async function shutdownTelemetry(): Promise<void> {
  const stopping = sdk;
  sdk = undefined;
  await stopping?.shutdown();
}
