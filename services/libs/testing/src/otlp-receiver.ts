// A stand-in for an OpenTelemetry collector in tests: an OTLP/HTTP endpoint that keeps the spans it is
// sent, in either encoding the exporters speak (http/json and http/protobuf).
import http from "node:http";
import type { AddressInfo } from "node:net";
import protobuf from "protobufjs";

/** The part of opentelemetry-proto's trace service that the tests read (field numbers as upstream). */
const OTLP_TRACE_PROTO = `
syntax = "proto3";
package opentelemetry.proto;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; Status status = 15;
}
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; }
}
`;
const ExportTraceServiceRequest = protobuf
  .parse(OTLP_TRACE_PROTO, { keepCase: false })
  .root.lookupType("opentelemetry.proto.ExportTraceServiceRequest");

/** One span as a test reads it: ids in hex, the exporting process's service.name, attributes flattened. */
export interface ReceivedSpan {
  readonly service: string;
  readonly scope: string;
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  /** 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
}

/** A running receiver. */
export interface OtlpReceiver {
  /** The value for OTEL_EXPORTER_OTLP_ENDPOINT (the exporters append /v1/traces). */
  readonly endpoint: string;
  /** Every span received so far. */
  readonly spans: readonly ReceivedSpan[];
  /** The Content-Type of every export request so far. */
  readonly contentTypes: readonly string[];
  /** Resolves with the spans once `done` holds for them; rejects after the timeout, listing what came. */
  waitFor(done: (spans: readonly ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<readonly ReceivedSpan[]>;
  close(): Promise<void>;
}

// The shapes of OTLP/JSON (and of the protobuf message after toObject with bytes as hex below).
interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: KeyValue[];
  status?: { code?: number };
}
interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { scope?: { name?: string }; spans?: OtlpSpan[] }[];
  }[];
}

function flatten(attributes: KeyValue[] = []): Record<string, string | number | boolean> {
  const flat: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes) {
    if (!value) continue;
    const scalar =
      value.stringValue ??
      value.boolValue ??
      (value.intValue !== undefined ? Number(value.intValue) : value.doubleValue);
    if (scalar !== undefined) flat[key] = scalar;
  }
  return flat;
}

function spansOf(request: OtlpRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = String(flatten(resourceSpans.resource?.attributes)["service.name"] ?? "");
    return (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({
        service,
        scope: scopeSpans.scope?.name ?? "",
        traceId: span.traceId.toLowerCase(),
        spanId: span.spanId.toLowerCase(),
        parentSpanId: (span.parentSpanId ?? "").toLowerCase(),
        name: span.name,
        kind: span.kind ?? 0,
        attributes: flatten(span.attributes),
        statusCode: span.status?.code ?? 0,
      })),
    );
  });
}

function decodeProtobuf(body: Buffer): OtlpRequest {
  const message = ExportTraceServiceRequest.decode(body);
  const object = ExportTraceServiceRequest.toObject(message, {
    longs: String,
    enums: Number,
    bytes: Array,
    defaults: false,
  }) as unknown;
  // Bytes came back as arrays of numbers: ids are written in hex, as OTLP/JSON writes them.
  return JSON.parse(
    JSON.stringify(object, (key, value: unknown) =>
      (key === "traceId" || key === "spanId" || key === "parentSpanId") && Array.isArray(value)
        ? Buffer.from(value as number[]).toString("hex")
        : value,
    ),
  ) as OtlpRequest;
}

/** Starts a receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const type = (req.headers["content-type"] ?? "").split(";", 1)[0]!.trim();
      try {
        if (req.method !== "POST" || req.url !== "/v1/traces") throw new Error(`unexpected ${req.method} ${req.url}`);
        const body = Buffer.concat(chunks);
        const request =
          type === "application/x-protobuf" ? decodeProtobuf(body) : (JSON.parse(body.toString("utf8")) as OtlpRequest);
        contentTypes.push(type);
        spans.push(...spansOf(request));
        res
          .writeHead(200, { "Content-Type": type || "application/json" })
          .end(type === "application/x-protobuf" ? Buffer.alloc(0) : "{}");
      } catch (error) {
        res.writeHead(400).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    async waitFor(done, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done(spans)) {
        if (Date.now() > deadline) {
          throw new Error(
            `the awaited spans did not arrive; received:\n${spans.map((s) => `${s.service} ${s.name} ${s.traceId}/${s.spanId}<-${s.parentSpanId}`).join("\n")}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return spans;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
