// One trace per request, across every service: a QR-code create through the edge, in both shapes of the
// platform, exported over OTLP/HTTP to a receiver of the test's own.
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { createLogger, shutdownTelemetry, startTelemetry } from "@qrplatform/platform";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "@qrplatform/testing";
import { call } from "./support/http.js";
import { startStack, type ProcessName, type Stack } from "./support/stack.js";

const SERVER = 2;
const CLIENT = 3;

/**
 * An account with a workspace, then one QR code created through the edge with a key used for the first
 * time, so the edge authenticates it with tenancy inside the create's trace; the create's response.
 */
async function createQrCode(stack: Stack) {
  const { account } = await stack.admin.createAccount({ name: "Traced", subscriptionTier: SubscriptionTier.ORIGIN });
  const { secret: setupKey } = await stack.admin.createApiKey({ accountId: account!.id, scopes: [] });
  const { secret: key } = await stack.admin.createApiKey({ accountId: account!.id, scopes: [] });
  const workspace = await call(stack.baseUrl, "POST", "/workspaces", { key: setupKey, body: { name: "Traced" } });
  expect(workspace.status).toBe(201);
  const created = await call(stack.baseUrl, "POST", `/workspaces/${workspace.body.id}/qr-codes`, {
    key,
    body: { name: "Menu", destination_url: "https://example.com/menu" },
  });
  expect(created.status).toBe(201);
  return created;
}

/** The spans of the trace whose root is the edge's span for the QR-code create. */
function createTrace(spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  const root = spans.find((s) => s.name === "POST /api/v1/workspaces/:workspace_id/qr-codes");
  return root ? spans.filter((s) => s.traceId === root.traceId) : [];
}

/** The RPCs of the create, by the service package that serves them. */
const PACKAGES = ["qrplatform.catalog.v1", "qrplatform.tenancy.v1", "qrplatform.links.v1", "qrplatform.rendering.v1"];
const servedBy = (span: ReceivedSpan, pkg: string) =>
  span.kind === SERVER && String(span.attributes["rpc.service"]).startsWith(`${pkg}.`);
const complete = (spans: readonly ReceivedSpan[]) => {
  const trace = createTrace(spans);
  return (
    PACKAGES.every((pkg) => trace.some((s) => servedBy(s, pkg))) &&
    trace.some((s) => s.attributes["db.system"] === "postgresql")
  );
};

/** What holds of a well-formed trace, whichever shape produced it. */
function expectWellFormed(trace: ReceivedSpan[]) {
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  const roots = trace.filter((s) => !s.parentSpanId);
  expect(roots.map((s) => s.name)).toEqual(["POST /api/v1/workspaces/:workspace_id/qr-codes"]);
  expect(roots[0]!.attributes).toMatchObject({
    "http.request.method": "POST",
    "http.route": "/api/v1/workspaces/:workspace_id/qr-codes",
    "http.response.status_code": 201,
  });
  expect(roots[0]!.attributes["url.path"]).toMatch(/^\/api\/v1\/workspaces\/[0-9a-f-]{36}\/qr-codes$/);
  // Every parent is in the trace: nothing was lost between the hops.
  for (const span of trace)
    if (span.parentSpanId) expect(byId.has(span.parentSpanId), `parent of ${span.name}`).toBe(true);
  // Every gRPC server span hangs under the client span of the same RPC.
  const servers = trace.filter((s) => s.kind === SERVER && s.attributes["rpc.system"] === "grpc");
  expect(servers.length).toBeGreaterThanOrEqual(4);
  for (const server of servers) {
    const client = byId.get(server.parentSpanId)!;
    expect(client.kind).toBe(CLIENT);
    expect(client.attributes).toMatchObject({
      "rpc.system": "grpc",
      "rpc.service": server.attributes["rpc.service"],
      "rpc.method": server.attributes["rpc.method"],
    });
    expect(server.attributes["rpc.grpc.status_code"]).toBe(0);
  }
  // SQL statements sit under the server span of the service that ran them.
  const sql = trace.filter((s) => s.attributes["db.system"] === "postgresql");
  for (const pkg of ["qrplatform.catalog.v1", "qrplatform.tenancy.v1", "qrplatform.links.v1"]) {
    const under = sql.filter((s) => servedBy(byId.get(s.parentSpanId)!, pkg));
    expect(under.length, `SQL under ${pkg}`).toBeGreaterThan(0);
  }
  for (const statement of sql) {
    expect(statement.kind).toBe(CLIENT);
    expect(statement.attributes["db.query.text"]).toEqual(expect.any(String));
    expect(statement.name).toBe(statement.attributes["db.operation.name"]);
  }
  expect(sql.some((s) => s.attributes["db.operation.name"] === "INSERT")).toBe(true);
}

describe("traces in the processes shape", () => {
  let receiver: OtlpReceiver;
  let stack: Stack;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    // Half the processes export JSON and half protobuf, so both encodings are proven end to end.
    const otel = (name: ProcessName, protocol: string): Record<string, string> => ({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_SERVICE_NAME: name,
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
    stack = await startStack("processes", {
      env: {
        edge: otel("edge", "http/json"),
        // Debug level: the catalog logs every RPC it serves, so its lines can be matched to the trace.
        catalog: { ...otel("catalog", "http/protobuf"), LOG_LEVEL: "debug" },
        tenancy: otel("tenancy", "http/json"),
        // Every redirect and scan batch, so the test sees one; the default keeps one in a hundred.
        links: { ...otel("links", "http/protobuf"), TRACES_HOT_PATH_RATIO: "1" },
        rendering: otel("rendering", "http/json"),
      },
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  it("follows a QR-code create from the edge through every service down to its SQL, in one trace", async () => {
    await createQrCode(stack);
    const trace = createTrace(await receiver.waitFor(complete));
    expectWellFormed(trace);
    expect(new Set(trace.map((s) => s.service))).toEqual(new Set(["edge", "catalog", "tenancy", "links", "rendering"]));
    // Each process exports its own spans: every server span comes from the process that serves it.
    for (const pkg of PACKAGES)
      for (const s of trace.filter((s) => servedBy(s, pkg))) expect(s.service).toBe(pkg.split(".")[1]);
    expect(new Set(receiver.contentTypes)).toEqual(new Set(["application/json", "application/x-protobuf"]));

    // The catalog's log line for CreateQrCode names this trace and the catalog's server span of it.
    const lines = stack
      .processes!.catalog.output()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const created = lines.find(
      (line) => line.msg === "rpc ok" && line.rpc === "qrplatform.catalog.v1.QrCodeService/CreateQrCode",
    );
    const served = trace.find((s) => s.kind === SERVER && s.attributes["rpc.method"] === "CreateQrCode")!;
    expect(created).toMatchObject({ trace_id: served.traceId, span_id: served.spanId });
  });

  it("traces a scan batch of the links process in a trace of its own, down to its INSERT, wherever the process records", async () => {
    const created = await createQrCode(stack);
    const res = await fetch(created.body.vanity_url, {
      redirect: "manual",
      headers: { "user-agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)" },
    });
    expect(res.status).toBe(302);
    const batchOf = (all: readonly ReceivedSpan[]) =>
      all.find((s) => s.name === "record scans" && s.service === "links");
    const insertOf = (all: readonly ReceivedSpan[], batch: ReceivedSpan) =>
      all.find(
        (s) =>
          s.traceId === batch.traceId &&
          /INSERT INTO links\.raw_scans/.test(String(s.attributes["db.query.text"] ?? "")),
      );
    const spans = await receiver.waitFor((all) => {
      const batch = batchOf(all);
      return batch !== undefined && insertOf(all, batch) !== undefined;
    });
    const batch = batchOf(spans)!;
    expect(batch.parentSpanId).toBe("");
    expect(batch.attributes["qrplatform.scans.count"]).toBeGreaterThanOrEqual(1);
    expect(insertOf(spans, batch)).toMatchObject({ service: "links", kind: CLIENT });
  });
});

describe("traces in the embedded shape", () => {
  let receiver: OtlpReceiver;
  let stack: Stack;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = "http/protobuf";
    process.env.OTEL_SERVICE_NAME = "qr-platform";
    process.env.OTEL_BSP_SCHEDULE_DELAY = "100";
    // Every redirect and scan batch, so the test sees one; the default keeps one in a hundred.
    process.env.TRACES_HOT_PATH_RATIO = "1";
    startTelemetry({ service: "test" });
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(
          ...chunk
            .toString()
            .trim()
            .split("\n")
            .map((line) => JSON.parse(line) as Record<string, unknown>),
        );
        done();
      },
    });
    stack = await startStack("in-process", { logger: createLogger({ service: "test", level: "debug", destination }) });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await shutdownTelemetry();
    await receiver?.close();
  });

  it("follows a QR-code create through the in-process transports down to its SQL, in one trace", async () => {
    await createQrCode(stack);
    const trace = createTrace(await receiver.waitFor(complete));
    expectWellFormed(trace);
    expect(new Set(trace.map((s) => s.service))).toEqual(new Set(["qr-platform"]));

    // Every line logged inside the request names its trace and a span of it; the access line the edge's span.
    const traceId = trace[0]!.traceId;
    const inTrace = lines.filter((line) => line.trace_id === traceId);
    const rpcLines = inTrace.filter((line) => line.msg === "rpc ok");
    expect(rpcLines.length).toBeGreaterThanOrEqual(4);
    const spanIds = new Set(trace.map((s) => s.spanId));
    for (const line of inTrace) expect(spanIds.has(String(line.span_id))).toBe(true);
    const access = inTrace.find((line) => line.msg === "request completed");
    expect(access?.span_id).toBe(trace.find((s) => !s.parentSpanId)!.spanId);
    expect(
      lines.find((line) => line.msg === "request completed" && (line.req as { url: string }).url.endsWith("/qr-codes"))
        ?.trace_id,
    ).toBe(traceId);
  });

  it("traces a sampled redirect down to its lookup, and the scan batch it leads to, in a trace of its own, down to its SQL", async () => {
    const created = await createQrCode(stack);
    const res = await fetch(created.body.vanity_url, {
      redirect: "manual",
      headers: { "user-agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)" },
    });
    expect(res.status).toBe(302);
    // As under npm start, the batch is stored in-process (storeCheckedScans), with no RecordScans call.
    const insertOf = (all: readonly ReceivedSpan[], batch: ReceivedSpan) =>
      all.find(
        (s) =>
          s.traceId === batch.traceId &&
          /INSERT INTO links\.raw_scans/.test(String(s.attributes["db.query.text"] ?? "")),
      );
    const spans = await receiver.waitFor((all) => {
      const batch = all.find((s) => s.name === "record scans");
      return all.some((s) => s.name === "GET /{slug}") && batch !== undefined && insertOf(all, batch) !== undefined;
    });
    const redirect = spans.find((s) => s.name === "GET /{slug}")!;
    expect(redirect.parentSpanId).toBe("");
    expect(redirect.attributes).toMatchObject({
      "http.route": "/{slug}",
      "http.response.status_code": 302,
      "qrplatform.hot_path": true,
    });
    const lookup = spans.filter(
      (s) => s.traceId === redirect.traceId && s.attributes["rpc.method"] === "ResolveRedirect",
    );
    expect(lookup.map((s) => s.kind).sort()).toEqual([SERVER, CLIENT]);
    const batch = spans.find((s) => s.name === "record scans")!;
    expect(batch.parentSpanId).toBe("");
    expect(batch.attributes["qrplatform.scans.count"]).toBeGreaterThanOrEqual(1);
    expect(insertOf(spans, batch)).toMatchObject({ kind: CLIENT, attributes: { "db.system": "postgresql" } });
    expect(spans.filter((s) => s.traceId === batch.traceId && s.attributes["rpc.method"] === "RecordScans")).toEqual(
      [],
    );
  });
});
