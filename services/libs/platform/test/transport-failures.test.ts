// What a Connect client sees when a service is down, restarting or drops the connection, measured
// against real servers on real sockets; and that remoteTransport turns all of it into UNAVAILABLE while
// a service's own errors pass through untouched.
import http2 from "node:http2";
import net, { type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "@qrplatform/api/grpc-health";
import { remoteTransport, serviceError } from "@qrplatform/platform";
import { freePort } from "@qrplatform/testing";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** Resolves once `pending` has started; used to act on a call while it is in flight. */
let started: () => void = () => {};

/** A gRPC server whose health check answers by the requested service name. */
async function healthServer() {
  const handler = connectNodeAdapter({
    grpc: true,
    routes(router) {
      router.service(Health, {
        async check(req) {
          if (req.service === "slow") {
            started();
            await new Promise((resolve) => setTimeout(resolve, 60_000).unref());
          }
          if (req.service === "conflict")
            throw serviceError(Code.Aborted, "slug_conflict", "Could not choose a unique slug; try again.");
          if (req.service === "bug") throw new Error("undefined is not a function");
          return { status: ServingStatus.SERVING };
        },
        async *watch() {},
        async list() {
          return { statuses: {} };
        },
      });
    },
  });
  return listen(http2.createServer(handler));
}

async function listen<S extends net.Server>(server: S): Promise<{ server: S; url: string }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => server.close());
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The same call through connect-node's bare transport and through remoteTransport. */
async function callBoth(url: string, service = "", options: { timeoutMs?: number } = {}) {
  const outcome = async (transport: Parameters<typeof createClient>[1]) => {
    try {
      await createClient(Health, transport).check({ service });
      return undefined;
    } catch (error) {
      return ConnectError.from(error);
    }
  };
  const bare = await outcome(createGrpcTransport({ baseUrl: url, defaultTimeoutMs: options.timeoutMs ?? 10_000 }));
  const remote = await outcome(remoteTransport({ baseUrl: url, token: "t", timeoutMs: options.timeoutMs ?? 10_000 }));
  return { bare, remote };
}

describe("a service that cannot be reached", () => {
  it("nothing listening (stopped or restarting): UNAVAILABLE from connect-node already", async () => {
    const { bare, remote } = await callBoth(`http://127.0.0.1:${await freePort()}`);
    expect(bare?.code).toBe(Code.Unavailable);
    expect(bare?.rawMessage).toMatch(/ECONNREFUSED/);
    expect(remote?.code).toBe(Code.Unavailable);
  });

  it("a connection reset as it opens: ABORTED with read ECONNRESET, reported as UNAVAILABLE", async () => {
    const { url } = await listen(net.createServer((socket) => socket.resetAndDestroy()));
    const { bare, remote } = await callBoth(url);
    expect(bare?.code).toBe(Code.Aborted);
    expect(bare?.rawMessage).toMatch(/ECONNRESET/);
    expect(remote?.code).toBe(Code.Unavailable);
    expect(remote?.cause).toBeInstanceOf(ConnectError);
  });

  it("a connection closed as it opens: CANCELED, reported as UNAVAILABLE", async () => {
    const { url } = await listen(net.createServer((socket) => socket.destroy()));
    const { bare, remote } = await callBoth(url);
    expect(bare?.code).toBe(Code.Canceled);
    expect(remote?.code).toBe(Code.Unavailable);
  });

  it("a stream reset by the server (RST_STREAM): INTERNAL, reported as UNAVAILABLE", async () => {
    const server = http2.createServer();
    server.on("stream", (stream) => {
      stream.on("error", () => {});
      stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    });
    const { url } = await listen(server);
    const { bare, remote } = await callBoth(url);
    expect(bare?.code).toBe(Code.Internal);
    expect(bare?.rawMessage).toMatch(/NGHTTP2_INTERNAL_ERROR/);
    expect(remote?.code).toBe(Code.Unavailable);
  });

  it("a session sent away with an error (GOAWAY): INTERNAL, reported as UNAVAILABLE", async () => {
    const server = http2.createServer();
    server.on("stream", (stream) => {
      stream.on("error", () => {});
      stream.session?.goaway(http2.constants.NGHTTP2_INTERNAL_ERROR);
    });
    const { url } = await listen(server);
    const { bare, remote } = await callBoth(url);
    expect(bare?.code).toBe(Code.Internal);
    expect(remote?.code).toBe(Code.Unavailable);
  });

  it("the server's connections destroyed mid-call, as when its process is killed: CANCELED, reported as UNAVAILABLE", async () => {
    const { server, url } = await healthServer();
    const sessions = new Set<http2.ServerHttp2Session>();
    server.on("session", (session) => sessions.add(session));
    const killMidCall = async (transport: Parameters<typeof createClient>[1]) => {
      const inFlight = new Promise<void>((resolve) => (started = resolve));
      const call = createClient(Health, transport)
        .check({ service: "slow" })
        .then(
          () => undefined,
          (error) => ConnectError.from(error),
        );
      await inFlight;
      for (const session of sessions) session.destroy();
      return call;
    };
    expect((await killMidCall(createGrpcTransport({ baseUrl: url })))?.code).toBe(Code.Canceled);
    expect((await killMidCall(remoteTransport({ baseUrl: url, token: "t" })))?.code).toBe(Code.Unavailable);
  });
});

describe("what is not a transport failure passes through", () => {
  it("a service's own error keeps its code and reason", async () => {
    const { url } = await healthServer();
    const { remote } = await callBoth(url, "conflict");
    expect(remote?.code).toBe(Code.Aborted);
    expect(remote?.details).toHaveLength(1);
  });

  it("a service's bug stays INTERNAL", async () => {
    const { url } = await healthServer();
    const { remote } = await callBoth(url, "bug");
    expect(remote?.code).toBe(Code.Internal);
  });

  it("a deadline stays DEADLINE_EXCEEDED", async () => {
    const { url } = await healthServer();
    const { bare, remote } = await callBoth(url, "slow", { timeoutMs: 50 });
    expect(bare?.code).toBe(Code.DeadlineExceeded);
    expect(remote?.code).toBe(Code.DeadlineExceeded);
  });

  it("a call the caller canceled stays CANCELED", async () => {
    const { url } = await healthServer();
    const abort = new AbortController();
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    const call = createClient(Health, remoteTransport({ baseUrl: url, token: "t" }))
      .check({ service: "slow" }, { signal: abort.signal })
      .then(
        () => undefined,
        (error) => ConnectError.from(error),
      );
    await inFlight;
    abort.abort();
    expect((await call)?.code).toBe(Code.Canceled);
  });
});
