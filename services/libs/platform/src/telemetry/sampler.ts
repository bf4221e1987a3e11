import type { Attributes, Context, Link, SpanKind } from "@opentelemetry/api";
import { trace } from "@opentelemetry/api";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SamplingResult,
} from "@opentelemetry/sdk-trace";

/** The attribute that marks a root span of the hot path (a redirect, a scan batch) for {@link HotPathSampler}. */
export const HOT_PATH_ATTRIBUTE = "qrplatform.hot_path";

/** The share of hot-path traces kept when TRACES_HOT_PATH_RATIO is unset: one redirect in a hundred. */
export const DEFAULT_HOT_PATH_RATIO = 0.01;

/**
 * The sampler `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` name, as the specification lists them
 * (`always_on`, `always_off`, `traceidratio` and their `parentbased_` forms; `parentbased_always_on` when
 * unset). The SDK's own reader is not exported, and ours has to be wrapped by {@link HotPathSampler}.
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv = process.env): Sampler {
  const name = (env.OTEL_TRACES_SAMPLER ?? "parentbased_always_on").trim().toLowerCase();
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG);
  const ratio = Number.isFinite(arg) && arg >= 0 && arg <= 1 && env.OTEL_TRACES_SAMPLER_ARG?.trim() ? arg : 1;
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio);
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * The configured sampler, with one more cut for the hot path: a root span marked with
 * {@link HOT_PATH_ATTRIBUTE} is kept only for `ratio` of trace ids, and then only if the configured
 * sampler keeps it too. Its children follow it (parent-based), so an unsampled redirect costs no span
 * anywhere down the line.
 */
export class HotPathSampler implements Sampler {
  private readonly hotPath: Sampler;

  constructor(
    private readonly base: Sampler,
    ratio: number,
  ) {
    this.hotPath = new TraceIdRatioBasedSampler(ratio);
  }

  shouldSample(
    context: Context,
    traceId: string,
    spanName: string,
    spanKind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    if (attributes[HOT_PATH_ATTRIBUTE] === true && trace.getSpanContext(context) === undefined) {
      const thinned = this.hotPath.shouldSample(context, traceId, spanName, spanKind, attributes, links);
      if (thinned.decision === SamplingDecision.NOT_RECORD) return thinned;
    }
    return this.base.shouldSample(context, traceId, spanName, spanKind, attributes, links);
  }

  toString(): string {
    return `HotPathSampler{${this.hotPath.toString()}, ${this.base.toString()}}`;
  }
}
