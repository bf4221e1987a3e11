// A server-streaming RPC behind the platform's interceptors, in both shapes: the call is counted,
// logged and traced when the stream ends (not when it starts), a dependency outage in the middle of a
// stream reaches the caller as UNAVAILABLE like any other, and a caller that cancels ends the
// handler, whose clean-up runs.
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { afterAll, describe, expect, it } from "vitest";
import type { Counter } from "prom-client";
import { DomainService } from "@qrplatform/api/links";
import { databaseDependency } from "@qrplatform/db";
import {
  errorInfoOf,
  inProcessTransport,
  Metrics,
  Readiness,
  remoteTransport,
  serveGrpc,
  type GrpcModule,
  type GrpcServer,
} from "@qrplatform/platform";
import { CREDENTIALS, silentLogger } from "./support/platform.js";

const refused = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });

/** How the stub's stream goes on after its first message. */
type Then = "end" | "database-down" | "wait-for-cancel";

/** DomainService with a WatchDomains that sends one message, then waits for the test to say how it goes on. */
function streamingModule(then: () => Promise<Then>, cleanedUp: () => void): GrpcModule {
  return {
    services: [DomainService],
    routes(router) {
      router.service(DomainService, {
        async *watchDomains(_req, context) {
          try {
            yield { resync: true };
            const next = await then();
            if (next === "database-down") throw refused();
            if (next === "wait-for-cancel") {
              if (!context.signal.aborted)
                await new Promise((resolve) => context.signal.addEventListener("abort", resolve, { once: true }));
              return;
            }
            yield { removed: [{ domainId: "d", hostname: "h.example" }] };
          } finally {
            cleanedUp();
          }
        },
      });
    },
  };
}

const servers: GrpcServer[] = [];
const readinesses: Readiness[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
  for (const readiness of readinesses) readiness.close();
});

type Shape = (module: GrpcModule, readiness: Readiness, metrics: Metrics) => Promise<Transport>;
const shapes: Record<string, Shape> = {
  "in-process": async (module, readiness, metrics) =>
    inProcessTransport({
      modules: [module],
      credentials: CREDENTIALS,
      logger: silentLogger,
      token: CREDENTIALS.serviceToken,
      readiness,
      metrics,
    }),
  "over gRPC": async (module, readiness, metrics) => {
    const server = await serveGrpc({
      modules: [module],
      credentials: CREDENTIALS,
      logger: silentLogger,
      host: "127.0.0.1",
      port: 0,
      readiness,
      metrics,
    });
    servers.push(server);
    return remoteTransport({ baseUrl: `http://127.0.0.1:${server.port}`, token: CREDENTIALS.serviceToken });
  },
};

/** grpc_server_handled_total of WatchDomains by code. */
async function handled(metrics: Metrics): Promise<Record<string, number>> {
  const counter = metrics.registry.getSingleMetric("grpc_server_handled_total") as Counter | undefined;
  const values = counter ? (await counter.get()).values : [];
  return Object.fromEntries(
    values
      .filter((v) => v.labels.grpc_method === "WatchDomains" && v.labels.grpc_type === "server_stream")
      .map((v) => [String(v.labels.grpc_code), v.value]),
  );
}

describe.each(Object.keys(shapes))("a server stream, %s", (shape) => {
  async function start() {
    let release: (then: Then) => void = () => {};
    const then = new Promise<Then>((resolve) => (release = resolve));
    let cleanups = 0;
    const database = databaseDependency({ check: async () => {} });
    const readiness = new Readiness([database], { checkIntervalMs: 3_600_000 });
    readinesses.push(readiness);
    const metrics = new Metrics();
    const transport = await shapes[shape]!(
      streamingModule(
        () => then,
        () => cleanups++,
      ),
      readiness,
      metrics,
    );
    return {
      client: createClient(DomainService, transport),
      metrics,
      /** Lets the stream go on after its first message. */
      release: (next: Then) => release(next),
      cleanups: () => cleanups,
    };
  }

  it("is counted as handled when it ends, not when it starts", async () => {
    const { client, metrics, release } = await start();
    const stream = client.watchDomains({})[Symbol.asyncIterator]();
    expect((await stream.next()).value).toMatchObject({ resync: true });
    expect(await handled(metrics)).toEqual({});
    release("end");
    expect((await stream.next()).value).toMatchObject({ removed: [{ domainId: "d" }] });
    expect((await stream.next()).done).toBe(true);
    await expect.poll(() => handled(metrics)).toEqual({ OK: 1 });
  });

  it("fails as UNAVAILABLE database_unavailable when the database goes away mid-stream", async () => {
    const { client, metrics, release } = await start();
    release("database-down");
    const received: unknown[] = [];
    const error = await (async () => {
      for await (const message of client.watchDomains({})) received.push(message);
    })().then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(received).toHaveLength(1);
    expect(error?.code).toBe(Code.Unavailable);
    expect(errorInfoOf(error!)?.reason).toBe("database_unavailable");
    expect(error?.rawMessage).not.toMatch(/ECONNREFUSED|5432/);
    await expect.poll(() => handled(metrics)).toEqual({ Unavailable: 1 });
  });

  it("ends the handler when the caller cancels, and runs its clean-up", async () => {
    const { client, metrics, release, cleanups } = await start();
    release("wait-for-cancel");
    const controller = new AbortController();
    const stream = client.watchDomains({}, { signal: controller.signal })[Symbol.asyncIterator]();
    expect((await stream.next()).value).toMatchObject({ resync: true });
    const rest = stream.next();
    controller.abort();
    await expect(rest).rejects.toMatchObject({ code: Code.Canceled });
    await expect.poll(cleanups).toBe(1);
    await expect.poll(() => handled(metrics)).toEqual({ Canceled: 1 });
  });
});
