// How a hosted service answers while a dependency (its database) is away, in both shapes: every RPC
// failing because of it is UNAVAILABLE with one reason, health turns NOT_SERVING and back, and
// liveness never moves.
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { afterAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "@qrplatform/api/grpc-health";
import { RedirectService } from "@qrplatform/api/links";
import { databaseDependency } from "@qrplatform/db";
import {
  errorInfoOf,
  HEALTH_ACCEPTING,
  HEALTH_LIVENESS,
  inProcessTransport,
  notFound,
  Readiness,
  remoteTransport,
  serveGrpc,
  type GrpcModule,
  type GrpcServer,
} from "@qrplatform/platform";
import { CREDENTIALS, silentLogger } from "./support/platform.js";

const refused = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });

/** A database that is up until told otherwise; an outage is the ECONNREFUSED its calls then fail with. */
function fakeDatabase() {
  let up = true;
  const dependency = databaseDependency({
    check: async () => {
      if (!up) throw refused();
    },
  });
  return {
    dependency,
    setUp: (value: boolean) => (up = value),
    query: () => (up ? Promise.resolve() : Promise.reject(refused())),
  };
}

/** One RPC that queries the database, and one whose own error must pass untouched. */
function moduleOver(database: ReturnType<typeof fakeDatabase>): GrpcModule {
  return {
    services: [RedirectService],
    routes(router) {
      router.service(RedirectService, {
        async resolveRedirect() {
          await database.query();
          throw notFound("link");
        },
        async recordScans() {
          // A handler that wraps the driver's error keeps it as the cause.
          await database.query().catch((error: unknown) => {
            throw new ConnectError("could not store scans", Code.Internal, undefined, undefined, error);
          });
          return {};
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

const shapes: Record<string, (module: GrpcModule, readiness: Readiness) => Promise<Transport>> = {
  "in-process": async (module, readiness) =>
    inProcessTransport({
      modules: [module],
      credentials: CREDENTIALS,
      logger: silentLogger,
      token: CREDENTIALS.serviceToken,
      readiness,
    }),
  "over gRPC": async (module, readiness) => {
    const server = await serveGrpc({
      modules: [module],
      credentials: CREDENTIALS,
      logger: silentLogger,
      host: "127.0.0.1",
      port: 0,
      readiness,
    });
    servers.push(server);
    return remoteTransport({ baseUrl: `http://127.0.0.1:${server.port}`, token: CREDENTIALS.serviceToken });
  },
};

describe.each(Object.keys(shapes))("a dependency that goes away, %s", (shape) => {
  it("fails calls fast as UNAVAILABLE database_unavailable, reports NOT_SERVING, and SERVING once a check succeeds", async () => {
    const database = fakeDatabase();
    // No periodic checks in the test: it runs them itself, so nothing depends on timing.
    const readiness = new Readiness([database.dependency], { checkIntervalMs: 3_600_000 });
    readinesses.push(readiness);
    const transport = await shapes[shape]!(moduleOver(database), readiness);
    const redirects = createClient(RedirectService, transport);
    const health = createClient(Health, transport);
    const status = async (service: string) => (await health.check({ service })).status;

    await expect(redirects.resolveRedirect({ host: "x", slug: "abc" })).rejects.toMatchObject({ code: Code.NotFound });
    expect(await status("")).toBe(ServingStatus.SERVING);

    database.setUp(false);
    for (const call of [
      () => redirects.resolveRedirect({ host: "x", slug: "abc" }),
      () => redirects.recordScans({ scans: [] }),
    ]) {
      const error = ConnectError.from(
        await call().then(
          () => undefined,
          (e: unknown) => e,
        ),
      );
      expect(error.code).toBe(Code.Unavailable);
      expect(errorInfoOf(error)?.reason).toBe("database_unavailable");
      expect(error.rawMessage).not.toMatch(/ECONNREFUSED|5432|store scans/);
    }
    expect(await status("")).toBe(ServingStatus.NOT_SERVING);
    expect(await status(RedirectService.typeName)).toBe(ServingStatus.NOT_SERVING);
    expect(await status(HEALTH_LIVENESS)).toBe(ServingStatus.SERVING);
    expect(await status(HEALTH_ACCEPTING)).toBe(ServingStatus.SERVING);

    // A failed check keeps it NOT_SERVING; the first one that succeeds brings it back.
    await readiness.checkNow();
    expect(await status("")).toBe(ServingStatus.NOT_SERVING);
    database.setUp(true);
    await readiness.checkNow();
    expect(await status("")).toBe(ServingStatus.SERVING);
    await expect(redirects.recordScans({ scans: [] })).resolves.toBeDefined();
  });
});

describe("readiness checks", () => {
  it("turn NOT_SERVING on a failed check even with no calls, and tell watchers of each change", async () => {
    const database = fakeDatabase();
    const readiness = new Readiness([database.dependency], { checkIntervalMs: 3_600_000 });
    readinesses.push(readiness);
    const changes: boolean[] = [];
    readiness.watch(() => changes.push(readiness.ready));
    database.setUp(false);
    await readiness.checkNow();
    await readiness.checkNow();
    database.setUp(true);
    await readiness.checkNow();
    expect(changes).toEqual([false, true]);
  });

  it("leave errors that are not an outage as they are", () => {
    const readiness = new Readiness([fakeDatabase().dependency], { checkIntervalMs: 3_600_000 });
    readinesses.push(readiness);
    expect(readiness.unavailableError(new Error("duplicate key"))).toBeUndefined();
    expect(readiness.ready).toBe(true);
  });
});
