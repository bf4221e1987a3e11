// The gRPC surface as a stock client sees it: @grpc/grpc-js with stubs loaded from the .proto files
// by @grpc/proto-loader, against the four services each on its own real h2c server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bearer,
  callOk,
  callServerStreaming,
  callUnary,
  decodeRpcStatus,
  errorInfosOf,
  grpc,
  loadServiceClients,
} from "./support/grpc-js.js";
import { addressOf, CREDENTIALS, HOSTED_SERVICES, serveOne, startPlatform, type Platform } from "./support/platform.js";
import { buildRendering } from "@qrplatform/rendering";
import type { GrpcServer } from "@qrplatform/platform";

const Status = grpc.status;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let platform: Platform;
let constructors: Map<string, grpc.ServiceClientConstructor>;
const openClients: grpc.Client[] = [];

/** A grpc-js client of the named service on the given server, without channel credentials (h2c). */
function clientOf(service: string, server: GrpcServer): grpc.Client {
  const Client = constructors.get(service);
  if (!Client) throw new Error(`No client for ${service} was loaded from the protos.`);
  const client = new Client(addressOf(server), grpc.credentials.createInsecure());
  openClients.push(client);
  return client;
}

/** Every method of a service as proto-loader describes it. */
function methodsOf(service: string) {
  return Object.entries(constructors.get(service)!.service).map(([name, def]) => ({ name, ...def }));
}

beforeAll(async () => {
  constructors = loadServiceClients();
  platform = await startPlatform();
});

afterAll(async () => {
  for (const client of openClients) client.close();
  await platform?.close();
});

describe("a stock grpc-js client", () => {
  it("loads every platform service from the protos", () => {
    expect([...constructors.keys()].filter((name) => name.startsWith("qrplatform.")).sort()).toEqual(
      Object.values(HOSTED_SERVICES).flat().sort(),
    );
  });

  it("creates an account as admin, reads it as a service, and manages workspaces through the catalog", async () => {
    const admin = clientOf("qrplatform.tenancy.v1.TenancyAdminService", platform.tenancy);
    const tenancy = clientOf("qrplatform.tenancy.v1.TenancyService", platform.tenancy);
    const workspaces = clientOf("qrplatform.catalog.v1.WorkspaceService", platform.catalog);
    const asAdmin = () => bearer(CREDENTIALS.adminToken);
    const asService = () => bearer(CREDENTIALS.serviceToken);

    const created = await callOk(
      admin,
      "CreateAccount",
      { name: "Interop Bakery", subscriptionTier: "SUBSCRIPTION_TIER_THRIVE" },
      asAdmin(),
    );
    const account = created.account as Record<string, unknown>;
    expect(account).toMatchObject({
      name: "Interop Bakery",
      slug: "interop-bakery",
      subscriptionTier: "SUBSCRIPTION_TIER_THRIVE",
      subscriptionStatus: "SUBSCRIPTION_STATUS_ACTIVE",
    });
    expect(account.id).toMatch(UUID);
    // google.protobuf.Timestamp arrives as a real message: seconds near now.
    const seconds = Number((account.createTime as { seconds: string }).seconds);
    expect(Math.abs(seconds - Date.now() / 1000)).toBeLessThan(300);

    const read = await callOk(tenancy, "GetAccount", { accountId: account.id }, asService());
    expect(read.account).toEqual(account);
    expect(read.plan).toMatchObject({ tier: "SUBSCRIPTION_TIER_THRIVE", publicApiAccess: true });

    const first = await callOk(
      workspaces,
      "CreateWorkspace",
      { accountId: account.id, name: "Menu Boards", description: "Printed in store" },
      asService(),
    );
    const workspace = first.workspace as Record<string, unknown>;
    expect(workspace).toMatchObject({
      accountId: account.id,
      name: "Menu Boards",
      slug: "menu-boards",
      description: "Printed in store",
      qrCodeCount: "0",
    });
    expect(workspace.id).toMatch(UUID);

    const got = await callOk(
      workspaces,
      "GetWorkspace",
      { accountId: account.id, workspaceId: workspace.id },
      asService(),
    );
    expect(got.workspace).toEqual(workspace);

    const second = await callOk(workspaces, "CreateWorkspace", { accountId: account.id, name: "Flyers" }, asService());
    // The admin credential grants every RPC, the catalog's included.
    const page1 = await callOk(workspaces, "ListWorkspaces", { accountId: account.id, pageSize: 1 }, asAdmin());
    expect((page1.workspaces as { id: string }[]).map((w) => w.id)).toEqual([workspace.id]);
    expect(page1.nextPageToken).not.toBe("");
    const page2 = await callOk(
      workspaces,
      "ListWorkspaces",
      { accountId: account.id, pageSize: 1, pageToken: page1.nextPageToken },
      asService(),
    );
    expect((page2.workspaces as { id: string }[]).map((w) => w.id)).toEqual([(second.workspace as { id: string }).id]);
  });

  it("gets UNIMPLEMENTED (12) from the links and rendering servers, and every other, for a method they do not serve", async () => {
    const servers: [string, GrpcServer][] = [
      ["qrplatform.links.v1.LinkService", platform.links],
      ["qrplatform.rendering.v1.RenderingService", platform.rendering],
      ["qrplatform.catalog.v1.QrCodeService", platform.catalog],
      ["qrplatform.tenancy.v1.TenancyService", platform.tenancy],
    ];
    const outcomes: string[] = [];
    for (const [service, server] of servers) {
      const client = clientOf(service, server);
      // An unknown method of a hosted service, and a method of a service this server does not host.
      for (const path of [`/${service}/NoSuchMethod`, "/qrplatform.nothing.v1.NothingService/Get"]) {
        const code = await new Promise<number>((resolve) => {
          client.makeUnaryRequest(
            path,
            (value: Buffer) => value,
            (value: Buffer) => value,
            Buffer.alloc(0),
            bearer(CREDENTIALS.serviceToken),
            { deadline: Date.now() + 5_000 },
            (error) => resolve(error ? error.code : Status.OK),
          );
        });
        outcomes.push(`${server.port}${path} ${Status[code]}`);
      }
    }
    expect(outcomes).toHaveLength(8);
    expect(outcomes.filter((line) => !line.endsWith(" UNIMPLEMENTED"))).toEqual([]);
  });

  it("reaches every declared method of every service: an empty request is answered by a handler, never crashes one", async () => {
    // Methods still being written answer UNIMPLEMENTED; implemented ones reject the empty request or
    // accept it. Either way the call must be authenticated, routed and answered with a deliberate code.
    const hosts: [string, GrpcServer][] = [
      ["qrplatform.tenancy.v1.TenancyService", platform.tenancy],
      ["qrplatform.tenancy.v1.TenancyAdminService", platform.tenancy],
      ["qrplatform.catalog.v1.WorkspaceService", platform.catalog],
      ["qrplatform.catalog.v1.QrCodeService", platform.catalog],
      ["qrplatform.catalog.v1.WebhookEndpointService", platform.catalog],
      ["qrplatform.links.v1.LinkService", platform.links],
      ["qrplatform.links.v1.DomainService", platform.links],
      ["qrplatform.links.v1.RedirectService", platform.links],
      ["qrplatform.links.v1.AnalyticsService", platform.links],
      ["qrplatform.links.v1.OutboxService", platform.links],
      ["qrplatform.rendering.v1.RenderingService", platform.rendering],
    ];
    // Codes that mean the call never reached a handler, or that a handler failed instead of answering.
    // UNAUTHENTICATED and PERMISSION_DENIED can be a handler's deliberate answer (AuthenticateApiKey),
    // so only the credential interceptor's own refusals count against the call.
    const undeliberate = new Set([
      Status.UNKNOWN,
      Status.INTERNAL,
      Status.UNAVAILABLE,
      Status.DATA_LOSS,
      Status.DEADLINE_EXCEEDED,
    ]);
    const refusedCredential = [
      "A valid internal credential is required.",
      "This service requires the admin credential.",
    ];
    const outcomes: string[] = [];
    for (const [service, server] of hosts) {
      const client = clientOf(service, server);
      const token = service.endsWith("AdminService") ? CREDENTIALS.adminToken : CREDENTIALS.serviceToken;
      for (const method of methodsOf(service)) {
        expect(method.requestStream, `${method.path} takes one request`).toBe(false);
        const outcome = method.responseStream
          ? await callServerStreaming(client, method.name, {}, bearer(token))
          : await callUnary(client, method.name, {}, bearer(token));
        outcomes.push(
          `${method.path} ${outcome.ok ? "OK" : `${Status[outcome.error.code]}: ${outcome.error.details}`}`,
        );
      }
    }
    expect(outcomes.length).toBeGreaterThanOrEqual(30);
    expect(
      outcomes.filter(
        (line) =>
          [...undeliberate].some((code) => line.includes(` ${Status[code]}:`)) ||
          refusedCredential.some((message) => line.endsWith(message)),
      ),
    ).toEqual([]);
  });

  it("is refused with UNAUTHENTICATED (16) without a valid credential, on every service, before any handler runs", async () => {
    const admin = clientOf("qrplatform.tenancy.v1.TenancyAdminService", platform.tenancy);
    const accountsBefore = await callOk(admin, "ListAccounts", { pageSize: 100 }, bearer(CREDENTIALS.adminToken));

    const calls: [string, GrpcServer, string, object][] = [
      [
        "qrplatform.tenancy.v1.TenancyAdminService",
        platform.tenancy,
        "CreateAccount",
        { name: "Sneaky", subscriptionTier: 1 },
      ],
      [
        "qrplatform.tenancy.v1.TenancyService",
        platform.tenancy,
        "GetAccount",
        { accountId: "00000000-0000-4000-8000-000000000000" },
      ],
      ["qrplatform.catalog.v1.WorkspaceService", platform.catalog, "ListWorkspaces", {}],
      ["qrplatform.catalog.v1.QrCodeService", platform.catalog, "GetQrCode", {}],
      ["qrplatform.links.v1.LinkService", platform.links, "GetLink", {}],
      ["qrplatform.rendering.v1.RenderingService", platform.rendering, "RenderQrCode", {}],
    ];
    const credentials: [string, () => grpc.Metadata][] = [
      ["none", () => bearer()],
      ["wrong token", () => bearer("x".repeat(CREDENTIALS.serviceToken.length))],
      [
        "token without the Bearer scheme",
        () => {
          const metadata = new grpc.Metadata();
          metadata.set("authorization", CREDENTIALS.adminToken);
          return metadata;
        },
      ],
    ];
    for (const [service, server, method, request] of calls) {
      const client = clientOf(service, server);
      for (const [label, metadata] of credentials) {
        const outcome = await callUnary(client, method, request, metadata());
        expect(outcome.error?.code, `${service}/${method} with ${label}`).toBe(Status.UNAUTHENTICATED);
      }
    }

    const accountsAfter = await callOk(admin, "ListAccounts", { pageSize: 100 }, bearer(CREDENTIALS.adminToken));
    expect(accountsAfter.accounts).toEqual(accountsBefore.accounts);
  });

  it("refuses every admin method with PERMISSION_DENIED (7) for the service credential", async () => {
    const admin = clientOf("qrplatform.tenancy.v1.TenancyAdminService", platform.tenancy);
    const codes = new Map<string, string>();
    for (const method of methodsOf("qrplatform.tenancy.v1.TenancyAdminService")) {
      const request =
        method.name === "CreateAccount" ? { name: "Not allowed", subscriptionTier: "SUBSCRIPTION_TIER_FREE" } : {};
      const outcome = await callUnary(admin, method.name, request, bearer(CREDENTIALS.serviceToken));
      codes.set(method.name, outcome.ok ? "OK" : Status[outcome.error.code]!);
    }
    expect(codes.size).toBe(7);
    expect([...codes.values()]).toEqual(Array(7).fill("PERMISSION_DENIED"));
    // The same credential is good for the non-admin tenancy service.
    const tenancy = clientOf("qrplatform.tenancy.v1.TenancyService", platform.tenancy);
    const outcome = await callUnary(
      tenancy,
      "GetAccount",
      { accountId: "00000000-0000-4000-8000-000000000000" },
      bearer(CREDENTIALS.serviceToken),
    );
    expect(outcome.error?.code).toBe(Status.NOT_FOUND);
    // And nothing was created by the refused CreateAccount.
    const list = await callOk(admin, "ListAccounts", { pageSize: 100 }, bearer(CREDENTIALS.adminToken));
    expect((list.accounts as { name: string }[]).map((a) => a.name)).not.toContain("Not allowed");
  });

  it("carries google.rpc.Status with an ErrorInfo detail in grpc-status-details-bin for handler errors", async () => {
    const workspaces = clientOf("qrplatform.catalog.v1.WorkspaceService", platform.catalog);
    const unknown = {
      accountId: "00000000-0000-4000-8000-000000000001",
      workspaceId: "00000000-0000-4000-8000-000000000002",
    };
    const outcome = await callUnary(workspaces, "GetWorkspace", unknown, bearer(CREDENTIALS.serviceToken));
    expect(outcome.ok).toBe(false);
    const error = outcome.error!;
    expect(error.code).toBe(Status.NOT_FOUND);
    expect(error.details).toBe("The workspace was not found.");

    const [raw] = error.metadata.get("grpc-status-details-bin");
    expect(Buffer.isBuffer(raw), "grpc-status-details-bin trailer is present").toBe(true);
    const status = decodeRpcStatus(raw as Buffer);
    expect(status.code).toBe(Status.NOT_FOUND);
    expect(status.message).toBe("The workspace was not found.");
    expect(status.details.map((d) => d.typeUrl)).toEqual(["type.googleapis.com/qrplatform.common.v1.ErrorInfo"]);
    const [info] = errorInfosOf(status);
    expect(info?.reason).toBe("not_found");
    expect(info?.metadata).toEqual({ resource: "workspace" });

    // A validation error names the offending field the same way.
    const invalid = await callUnary(
      workspaces,
      "CreateWorkspace",
      { accountId: unknown.accountId, name: "" },
      bearer(CREDENTIALS.serviceToken),
    );
    expect(invalid.error?.code).toBe(Status.INVALID_ARGUMENT);
    const [invalidRaw] = invalid.error!.metadata.get("grpc-status-details-bin");
    const [violation] = errorInfosOf(decodeRpcStatus(invalidRaw as Buffer));
    expect(violation?.reason).toBe("validation_error");
    expect(violation?.fieldViolations.map((v) => v.field)).toEqual(["name"]);
  });
});

describe("grpc.health.v1 through grpc-js", () => {
  it("answers SERVING for the server and each hosted service, without a credential", async () => {
    const expected: [GrpcServer, string[]][] = [
      [
        platform.tenancy,
        [
          "qrplatform.tenancy.v1.TenancyService",
          "qrplatform.tenancy.v1.IdempotencyKeyService",
          "qrplatform.tenancy.v1.TenancyAdminService",
        ],
      ],
      [
        platform.catalog,
        [
          "qrplatform.catalog.v1.WorkspaceService",
          "qrplatform.catalog.v1.QrCodeService",
          "qrplatform.catalog.v1.WebhookEndpointService",
        ],
      ],
      [
        platform.links,
        [
          "qrplatform.links.v1.LinkService",
          "qrplatform.links.v1.DomainService",
          "qrplatform.links.v1.RedirectService",
          "qrplatform.links.v1.AnalyticsService",
          "qrplatform.links.v1.OutboxService",
        ],
      ],
      [platform.rendering, ["qrplatform.rendering.v1.RenderingService"]],
    ];
    for (const [server, services] of expected) {
      const health = clientOf("grpc.health.v1.Health", server);
      for (const service of ["", ...services]) {
        expect(await callOk(health, "Check", { service }), `${server.port} ${service}`).toEqual({ status: "SERVING" });
      }
      const unknown = await callUnary(health, "Check", { service: "qrplatform.nope.v1.Nothing" });
      expect(unknown.error?.code).toBe(Status.NOT_FOUND);
      const list = await callOk(health, "List", {});
      expect(Object.keys(list.statuses as object).sort()).toEqual(["", ...services].sort());
    }
  });

  it("reports NOT_SERVING to watchers and checks once shutting down, and refuses connections after close()", async () => {
    const server = await serveOne(await buildRendering());
    try {
      const health = clientOf("grpc.health.v1.Health", server);
      const watch = (health as unknown as { Watch(req: object): grpc.ClientReadableStream<{ status: string }> }).Watch({
        service: "",
      });
      const seen: string[] = [];
      const ended = new Promise<grpc.StatusObject>((resolve) => {
        watch.on("data", (update: { status: string }) => seen.push(update.status));
        watch.on("status", resolve);
        watch.on("error", () => {});
      });
      await expect.poll(() => seen, { timeout: 2_000 }).toEqual(["SERVING"]);

      // Shutting health down first lets load balancers drain before connections close.
      server.health.shutDown();
      await expect.poll(() => seen, { timeout: 2_000 }).toEqual(["SERVING", "NOT_SERVING"]);
      expect(await callOk(health, "Check", { service: "" })).toEqual({ status: "NOT_SERVING" });

      await server.close();
      await ended;
      // A fresh client finds nothing listening.
      const late = clientOf("grpc.health.v1.Health", server);
      const refused = await callUnary(late, "Check", { service: "" }, new grpc.Metadata(), 2_000);
      expect(refused.error?.code).toBe(Status.UNAVAILABLE);
    } finally {
      await server.close();
    }
  });

  it("tells a watcher NOT_SERVING when close() is called without an earlier shutDown()", async () => {
    const server = await serveOne(await buildRendering());
    try {
      const health = clientOf("grpc.health.v1.Health", server);
      const watch = (health as unknown as { Watch(req: object): grpc.ClientReadableStream<{ status: string }> }).Watch({
        service: "",
      });
      const seen: string[] = [];
      const ended = new Promise<grpc.StatusObject>((resolve) => {
        watch.on("data", (update: { status: string }) => seen.push(update.status));
        watch.on("status", resolve);
        watch.on("error", () => {});
      });
      await expect.poll(() => seen, { timeout: 2_000 }).toEqual(["SERVING"]);
      await server.close();
      await ended;
      expect(seen).toEqual(["SERVING", "NOT_SERVING"]);
    } finally {
      await server.close();
    }
  });
});
