import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { DescService } from "@bufbuild/protobuf";
import {
  ConnectError,
  createRouterTransport,
  type ConnectRouter,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Logger } from "pino";
import { Health } from "@qrplatform/api/grpc-health";
import { ServerReflection } from "@qrplatform/api/grpc-reflection";
import { observeCall } from "./call-outcome.js";
import { presentCredential, requireInternalCredentials, type InternalCredentials } from "./credentials.js";
import { HealthState, registerHealth } from "./health.js";
import { failFastWhenUnavailable, type Readiness } from "./readiness.js";
import { registerReflection } from "./reflection.js";
import { checkRequestFields } from "./request-checks.js";
import { directUnaryCalls } from "./direct-calls.js";
import { traceClientCalls, traceServerCalls } from "../telemetry/grpc.js";
import type { Metrics } from "../metrics/metrics.js";
import { rpcMetrics } from "../metrics/rpc-metrics.js";
import { listenOn } from "../ports.js";

/** What each gRPC service package exports so it can be hosted alone, with others, or in-process. */
export interface GrpcModule {
  /** The gRPC services this module implements. */
  readonly services: readonly DescService[];
  /** The services that accept only the admin credential. */
  readonly adminOnly?: readonly DescService[];
  /** Registers the implementations on a router. */
  routes(router: ConnectRouter): void;
}

/** Logs every RPC with its outcome, when it ends (a stream when its last message is sent); failures that are the server's fault at error level. */
function logCalls(logger: Logger): Interceptor {
  return (next) => (req) => {
    const started = performance.now();
    const rpc = `${req.service.typeName}/${req.method.name}`;
    return observeCall(() => next(req), req.signal, {
      settled(error) {
        const ms = Math.round(performance.now() - started);
        if (error === undefined) {
          logger.debug({ rpc, ms }, "rpc ok");
          return;
        }
        const connectError = ConnectError.from(error);
        const serverFault = [2, 12, 13, 15].includes(connectError.code);
        logger[serverFault ? "error" : "debug"](
          { rpc, ms, code: connectError.code, err: serverFault ? error : undefined },
          "rpc failed",
        );
      },
    });
  };
}

/** The interceptors every hosted service runs behind, outermost first. */
function serverInterceptors(
  modules: readonly GrpcModule[],
  credentials: InternalCredentials,
  logger: Logger,
  readiness: Readiness | undefined,
  metrics: Metrics | undefined,
) {
  const adminOnly = modules.flatMap((m) => m.adminOnly ?? []);
  // The log and the metrics see what the caller gets: an outage as UNAVAILABLE, not as the driver's
  // error; the span around them gives the log lines their trace.
  return [
    traceServerCalls(),
    ...(metrics?.enabled ? [rpcMetrics(metrics)] : []),
    logCalls(logger),
    ...(readiness ? [failFastWhenUnavailable(readiness)] : []),
    requireInternalCredentials(credentials, adminOnly),
    // After the credential: only a caller we know learns which of its fields were refused.
    checkRequestFields(),
  ];
}

/** Registers the modules together with health checking and reflection for all of them. */
function routesOf(modules: readonly GrpcModule[], health: HealthState) {
  const services = modules.flatMap((m) => m.services);
  return (router: ConnectRouter) => {
    for (const module of modules) module.routes(router);
    registerHealth(router, health);
    // Reflection describes health and itself too, so tools need no local schema for either.
    registerReflection(router, [...services, Health, ServerReflection]);
  };
}

/** A running gRPC server. */
export interface GrpcServer {
  /** The port it listens on, useful when it was started on port 0. */
  readonly port: number;
  /** Health state; shut down first so probes fail before connections drain. */
  readonly health: HealthState;
  /** Stops accepting calls, lets in-flight calls finish, then closes. */
  close(): Promise<void>;
}

/** What a listening gRPC port serves once its process has built its services. */
export interface GrpcServing {
  modules: readonly GrpcModule[];
  credentials: InternalCredentials;
  /** What the modules depend on: outages answer UNAVAILABLE and turn health NOT_SERVING. */
  readiness?: Readiness;
  /** Where RPCs are counted and timed; not at all when unset. */
  metrics?: Metrics;
}

/** A gRPC port bound before its services exist: see {@link listenGrpc}. */
export interface GrpcListener extends GrpcServer {
  /** Serves the modules from now on, with health following their readiness. */
  serve(serving: GrpcServing): void;
}

/**
 * Binds the gRPC port (h2c) at once, before the services are built: a busy port is reported before a
 * long start rather than after it, and while the process starts (its database may be away) it answers
 * health checks, with only liveness SERVING, and UNAVAILABLE to every other call.
 * `portVariable` is the setting named when the port is taken; GRPC_PORT by default.
 */
export async function listenGrpc(options: {
  logger: Logger;
  host: string;
  port: number;
  portVariable?: string;
}): Promise<GrpcListener> {
  const { logger } = options;
  const health = new HealthState([], undefined, { starting: true });
  const shutdown = new AbortController();
  const startingRoutes = connectNodeAdapter({
    routes: (router) => {
      registerHealth(router, health);
      registerReflection(router, [Health, ServerReflection]);
    },
    shutdownSignal: shutdown.signal,
  });
  const starting = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) =>
    /^\/grpc\.(health|reflection)\./.test(req.url) ? startingRoutes(req, res) : answerStarting(req, res);
  let handler: (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void = starting;
  const server = http2.createServer((req, res) => handler(req, res));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  await listenOn(server, { host: options.host, port: options.port, variable: options.portVariable ?? "GRPC_PORT" });
  const port = (server.address() as AddressInfo).port;
  logger.info({ port }, "gRPC port bound: starting");

  return {
    port,
    health,
    serve({ modules, credentials, readiness, metrics }) {
      handler = connectNodeAdapter({
        routes: routesOf(modules, health),
        interceptors: serverInterceptors(modules, credentials, logger, readiness, metrics),
        shutdownSignal: shutdown.signal,
        grpc: true,
        grpcWeb: true,
        connect: true,
      });
      health.started(
        modules.flatMap((m) => m.services),
        readiness,
      );
      logger.info({ port, services: modules.flatMap((m) => m.services.map((s) => s.typeName)) }, "gRPC listening");
    },
    async close() {
      health.shutDown();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Graceful: each session finishes its open streams, then closes.
      for (const session of sessions) session.close();
      shutdown.abort();
      await closed;
    },
  };
}

/**
 * Any call but health and reflection while the services are being built: UNAVAILABLE, which every
 * client retries or reports as "try again later", in the protocol the caller spoke.
 */
function answerStarting(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse): void {
  const message = "The service is starting; retry shortly.";
  const contentType = String(req.headers["content-type"] ?? "");
  if (contentType.startsWith("application/grpc")) {
    // A trailers-only response: the status travels in the headers.
    res.writeHead(200, {
      "content-type": contentType,
      "grpc-status": "14",
      "grpc-message": encodeURIComponent(message),
    });
    res.end();
    return;
  }
  res.writeHead(503, { "content-type": "application/json", "retry-after": "1" });
  res.end(JSON.stringify({ code: "unavailable", message }));
}

/**
 * Serves the modules over h2c: gRPC, gRPC-Web and Connect on one HTTP/2 port, with health checking,
 * reflection and internal credentials.
 */
export async function serveGrpc(
  options: GrpcServing & { logger: Logger; host: string; port: number; portVariable?: string },
): Promise<GrpcServer> {
  const listener = await listenGrpc(options);
  listener.serve(options);
  return listener;
}

/**
 * A transport that calls the modules in this process through the same interceptors as the network
 * server, and presents `token` like a remote client would. The embedded platform and fast tests use it.
 * Unary calls go straight to the implementation ({@link directUnaryCalls}: no encoding, no envelopes,
 * no HTTP headers); streaming calls, and every call when an `encoding` is asked for, go through
 * Connect's router transport, which encodes each message as the network would.
 */
export function inProcessTransport(options: {
  modules: readonly GrpcModule[];
  credentials: InternalCredentials;
  logger: Logger;
  token: string;
  /** Client-side interceptors run before the credential is attached; tests use them to inject faults. */
  interceptors?: Interceptor[];
  /** What the modules depend on, as for {@link serveGrpc}: both shapes fail the same way. */
  readiness?: Readiness;
  /** Where the calls are counted and timed, as for {@link serveGrpc}; not at all when unset. */
  metrics?: Metrics;
  /**
   * Every message encoded as over the network, in binary or as JSON (the Connect protocol's other
   * encoding); the gRPC input suite tries both. Unset, unary messages are handed over unencoded.
   */
  encoding?: "binary" | "json";
}): Transport {
  const { modules, credentials, logger, readiness } = options;
  const health = new HealthState(
    modules.flatMap((m) => m.services),
    readiness,
  );
  const routes = routesOf(modules, health);
  const server = serverInterceptors(modules, credentials, logger, readiness, options.metrics);
  const client = [traceClientCalls(), ...(options.interceptors ?? []), presentCredential(options.token)];
  const routed = createRouterTransport(routes, {
    router: { interceptors: server },
    transport: { interceptors: client, useBinaryFormat: options.encoding !== "json" },
  });
  if (options.encoding) return routed;
  const direct = directUnaryCalls(routes, server, client);
  return {
    unary: (method, ...rest) => (direct(method) ?? routed.unary)(method, ...rest),
    stream: routed.stream,
  };
}
