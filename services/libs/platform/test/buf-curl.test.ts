// `buf curl`, a stock non-Node gRPC client, against each running service: discovery through
// grpc.reflection.v1, calls described only by what reflection returns, and grpc.health.v1.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GrpcServer } from "@qrplatform/platform";
import { bufCurl, bufErrorOf } from "./support/buf-curl.js";
import { loadServiceClients } from "./support/grpc-js.js";
import { CREDENTIALS, HOSTED_SERVICES, startPlatform, type Platform } from "./support/platform.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let platform: Platform;
const baseUrl = (server: GrpcServer) => `http://127.0.0.1:${server.port}`;

/** "package.Service/Method" for every method of the services, read from the .proto files. */
function methodsFromProtos(services: readonly string[]): string[] {
  const clients = loadServiceClients();
  return services
    .flatMap((service) => Object.values(clients.get(service)!.service).map((method) => method.path.slice(1)))
    .sort();
}

const lines = (text: string) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .sort();

beforeAll(async () => {
  platform = await startPlatform();
});
afterAll(() => platform?.close());

describe("buf curl through server reflection", () => {
  it.each(Object.keys(HOSTED_SERVICES) as (keyof typeof HOSTED_SERVICES)[])(
    "lists every method of the %s service",
    async (name) => {
      const result = await bufCurl(baseUrl(platform[name]), { extra: ["--list-methods"] });
      expect(result.stderr).toBe("");
      expect(result.exitCode).toBe(0);
      const expected = methodsFromProtos(HOSTED_SERVICES[name]);
      expect(expected.length).toBeGreaterThan(0);
      const listed = lines(result.stdout);
      expect(listed.filter((method) => method.startsWith("qrplatform."))).toEqual(expected);
      // Besides its own services a server may describe only the standard health and reflection services.
      expect(
        listed.filter(
          (method) => !method.startsWith("qrplatform.") && !/^grpc\.(health|reflection)\.v1\./.test(method),
        ),
      ).toEqual([]);
    },
  );

  it("lists the admin service's methods, CreateAccount among them", async () => {
    const result = await bufCurl(baseUrl(platform.tenancy), { extra: ["--list-methods"] });
    expect(lines(result.stdout)).toContain("qrplatform.tenancy.v1.TenancyAdminService/CreateAccount");
  });

  it("calls methods whose schema came from reflection alone, over gRPC, gRPC-Web and Connect", async () => {
    const admin = `${baseUrl(platform.tenancy)}/qrplatform.tenancy.v1.TenancyAdminService/CreateAccount`;
    const created = await bufCurl(admin, {
      token: CREDENTIALS.adminToken,
      data: { name: "Buf Curl Co", subscriptionTier: "SUBSCRIPTION_TIER_ORIGIN" },
    });
    expect(created.stderr).toBe("");
    expect(created.exitCode).toBe(0);
    const { account } = JSON.parse(created.stdout);
    expect(account).toMatchObject({
      name: "Buf Curl Co",
      slug: "buf-curl-co",
      subscriptionTier: "SUBSCRIPTION_TIER_ORIGIN",
    });
    expect(account.id).toMatch(UUID);
    // google.protobuf.Timestamp (an import of the service's file) is resolved and printed as RFC 3339.
    expect(Date.parse(account.createTime)).toBeGreaterThan(Date.now() - 300_000);

    const getAccount = `${baseUrl(platform.tenancy)}/qrplatform.tenancy.v1.TenancyService/GetAccount`;
    for (const protocol of ["grpc", "grpcweb", "connect"] as const) {
      const read = await bufCurl(getAccount, {
        protocol,
        token: CREDENTIALS.serviceToken,
        data: { accountId: account.id },
      });
      expect(read.exitCode, `${protocol}: ${read.stderr}`).toBe(0);
      expect(JSON.parse(read.stdout).account, protocol).toEqual(account);
    }

    const workspace = await bufCurl(
      `${baseUrl(platform.catalog)}/qrplatform.catalog.v1.WorkspaceService/CreateWorkspace`,
      {
        token: CREDENTIALS.serviceToken,
        data: { accountId: account.id, name: "From buf" },
      },
    );
    expect(workspace.exitCode, workspace.stderr).toBe(0);
    expect(JSON.parse(workspace.stdout).workspace).toMatchObject({ accountId: account.id, slug: "from-buf" });
  });

  it("reports gRPC errors with their codes: unauthenticated, permission denied, not found, invalid argument", async () => {
    const createAccount = `${baseUrl(platform.tenancy)}/qrplatform.tenancy.v1.TenancyAdminService/CreateAccount`;
    const request = { name: "Refused", subscriptionTier: "SUBSCRIPTION_TIER_FREE" };

    const anonymous = await bufCurl(createAccount, { data: request });
    expect(anonymous.exitCode).toBe(16 * 8);
    expect(bufErrorOf(anonymous).code).toBe("unauthenticated");

    const asService = await bufCurl(createAccount, { token: CREDENTIALS.serviceToken, data: request });
    expect(asService.exitCode).toBe(7 * 8);
    expect(bufErrorOf(asService).code).toBe("permission_denied");

    const missing = await bufCurl(`${baseUrl(platform.catalog)}/qrplatform.catalog.v1.WorkspaceService/GetWorkspace`, {
      token: CREDENTIALS.serviceToken,
      data: { accountId: "00000000-0000-4000-8000-000000000001", workspaceId: "00000000-0000-4000-8000-000000000002" },
    });
    expect(missing.exitCode).toBe(5 * 8);
    const notFound = bufErrorOf(missing);
    expect(notFound).toMatchObject({ code: "not_found", message: "The workspace was not found." });
    expect(notFound.details?.map((d) => d.type)).toEqual(["qrplatform.common.v1.ErrorInfo"]);

    const invalid = await bufCurl(
      `${baseUrl(platform.catalog)}/qrplatform.catalog.v1.WorkspaceService/CreateWorkspace`,
      {
        token: CREDENTIALS.serviceToken,
        data: { accountId: "00000000-0000-4000-8000-000000000001", name: "" },
      },
    );
    expect(invalid.exitCode).toBe(3 * 8);
    expect(bufErrorOf(invalid)).toMatchObject({ code: "invalid_argument", message: "The request is not valid." });
  });
});

describe("buf curl of grpc.health.v1", () => {
  it.each(Object.keys(HOSTED_SERVICES) as (keyof typeof HOSTED_SERVICES)[])(
    "answers Health/Check SERVING on the %s server, without a credential",
    async (name) => {
      const url = `${baseUrl(platform[name])}/grpc.health.v1.Health/Check`;
      // The server as a whole, and one hosted service by name (grpc-js checks every name; buf is slower to start).
      for (const service of ["", HOSTED_SERVICES[name][0]!]) {
        const result = await bufCurl(url, { data: { service } });
        expect(result.exitCode, result.stderr).toBe(0);
        expect(JSON.parse(result.stdout), service).toEqual({ status: "SERVING" });
      }
    },
  );

  it("describes grpc.health.v1.Health through reflection, so Health/Check needs no --schema", async () => {
    const result = await bufCurl(`${baseUrl(platform.tenancy)}/grpc.health.v1.Health/Check`, { data: { service: "" } });
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual({ status: "SERVING" });
  });
});
