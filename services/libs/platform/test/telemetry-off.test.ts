// Tracing off (no OTLP endpoint, or OTEL_SDK_DISABLED): the instrumentation must not touch the tracer
// at all, so the redirect path pays nothing for it.
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { trace, type Tracer, type TracerProvider } from "@opentelemetry/api";
import { afterAll, describe, expect, it } from "vitest";
import {
  startTelemetry,
  tracingConfigured,
  tracingEnabled,
  traceHttpRequest,
  withSpan,
} from "../src/telemetry/index.js";

describe("tracing off", () => {
  afterAll(() => trace.disable());

  it("is off unless an OTLP endpoint is set, and whenever OTEL_SDK_DISABLED is true", () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" })).toBe(
      false,
    );
  });

  it("starts no span for a request or a batch, even with a tracer provider registered", async () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    startTelemetry({ service: "test" });
    expect(tracingEnabled()).toBe(false);
    let started = 0;
    const counting = new Proxy({} as Tracer, {
      get: () => () => {
        started++;
        throw new Error("the tracer was used");
      },
    });
    trace.setGlobalTracerProvider({ getTracer: () => counting } as TracerProvider);

    let handled = 0;
    const res = Object.assign(new EventEmitter(), { statusCode: 302 }) as unknown as ServerResponse;
    traceHttpRequest(
      { method: "GET", url: "/abc", headers: {} } as IncomingMessage,
      res,
      { route: () => "/{slug}", hotPath: true },
      () => handled++,
    );
    expect(await withSpan("record scans", { hotPath: true }, async () => "stored")).toBe("stored");
    expect(handled).toBe(1);
    expect(started).toBe(0);
  });
});
