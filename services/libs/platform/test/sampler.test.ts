import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from "@opentelemetry/api";
import { SamplingDecision } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { HOT_PATH_ATTRIBUTE, HotPathSampler, samplerFromEnv } from "../src/telemetry/sampler.js";

const traceIds = Array.from({ length: 2000 }, (_, i) =>
  (i * 2654435761).toString(16).padStart(8, "0").repeat(4).slice(0, 32),
);
const kept = (sampler: HotPathSampler, attributes: Record<string, boolean>, context = ROOT_CONTEXT) =>
  traceIds.filter(
    (id) =>
      sampler.shouldSample(context, id, "span", SpanKind.SERVER, attributes, []).decision ===
      SamplingDecision.RECORD_AND_SAMPLED,
  ).length;

describe("the sampler", () => {
  it("reads OTEL_TRACES_SAMPLER and its argument as the specification names them", () => {
    expect(samplerFromEnv({}).toString()).toMatch(/^ParentBased\{root=AlwaysOnSampler/);
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: "always_off" }).toString()).toBe("AlwaysOffSampler");
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" }).toString()).toBe(
      "TraceIdRatioBased{0.25}",
    );
    expect(
      samplerFromEnv({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.5" }).toString(),
    ).toMatch(/root=TraceIdRatioBased\{0.5\}/);
    // A ratio that is not one falls back to keeping everything, as the SDK does.
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "lots" }).toString()).toBe(
      "TraceIdRatioBased{1}",
    );
  });

  it("thins hot-path roots to their ratio and leaves every other span to the configured sampler", () => {
    const sampler = new HotPathSampler(samplerFromEnv({}), 0.1);
    expect(kept(sampler, {})).toBe(traceIds.length);
    const hot = kept(sampler, { [HOT_PATH_ATTRIBUTE]: true });
    expect(hot).toBeGreaterThan(0);
    expect(hot).toBeLessThan(traceIds.length * 0.2);
    expect(kept(new HotPathSampler(samplerFromEnv({}), 0), { [HOT_PATH_ATTRIBUTE]: true })).toBe(0);
    // Never more than the configured sampler keeps.
    expect(
      kept(new HotPathSampler(samplerFromEnv({ OTEL_TRACES_SAMPLER: "always_off" }), 1), {
        [HOT_PATH_ATTRIBUTE]: true,
      }),
    ).toBe(0);
  });

  it("lets a hot-path span under a sampled parent follow its parent", () => {
    const parent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: "a".repeat(32),
      spanId: "b".repeat(16),
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    expect(kept(new HotPathSampler(samplerFromEnv({}), 0), { [HOT_PATH_ATTRIBUTE]: true }, parent)).toBe(
      traceIds.length,
    );
  });
});
