// The OpenAPI documents kubectl reads: the v3 root and its per-group-version documents built from the CRD
// schemas (explain, and apply's check for fieldValidation), and /openapi/v2 as JSON.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeKubeApiServer, type FakeKubeApiServer } from "../src/index.js";
import { customDomainCrd } from "./support.js";

let fake: FakeKubeApiServer;

beforeEach(async () => {
  fake = await startFakeKubeApiServer({ crds: [customDomainCrd] });
});

afterEach(() => fake.close());

async function get(path: string, accept = "application/json"): Promise<{ status: number; body: any }> {
  const res = await fetch(`${fake.url}${path}`, { headers: { accept } });
  return { status: res.status, body: await res.json() };
}

describe("OpenAPI v3", () => {
  it("names a document per group version, and the CRD's document describes it from its schema", async () => {
    const root = await get("/openapi/v3");
    expect(Object.keys(root.body.paths)).toEqual(
      expect.arrayContaining(["api/v1", "apis/qr-platform.io/v1alpha1", "apis/networking.k8s.io/v1"]),
    );
    const url = root.body.paths["apis/qr-platform.io/v1alpha1"].serverRelativeURL as string;
    expect(url).toMatch(/^\/openapi\/v3\/apis\/qr-platform\.io\/v1alpha1\?hash=[0-9A-F]{128}$/);

    const { status, body } = await get(url);
    expect(status).toBe(200);
    const schema = body.components.schemas["io.qr-platform.v1alpha1.CustomDomain"];
    expect(schema["x-kubernetes-group-version-kind"]).toEqual([
      { group: "qr-platform.io", version: "v1alpha1", kind: "CustomDomain" },
    ]);
    expect(schema.properties.spec.required).toEqual(["accountId"]);
    expect(schema.properties.spec.properties.accountId.description).toMatch(/tenant account/);

    // kubectl apply leaves validation to the server only where the PATCH operation lists fieldValidation.
    const patch = body.paths["/apis/qr-platform.io/v1alpha1/customdomains/{name}"].patch;
    expect(patch["x-kubernetes-group-version-kind"]).toEqual({
      group: "qr-platform.io",
      version: "v1alpha1",
      kind: "CustomDomain",
    });
    expect(patch.parameters).toContainEqual(expect.objectContaining({ name: "fieldValidation", in: "query" }));
  });

  it("describes namespaced built-ins under their namespace, and answers 404 for a group version it does not serve", async () => {
    const { body } = await get("/openapi/v3/api/v1");
    expect(body.paths["/api/v1/namespaces/{namespace}/events/{name}"].patch["x-kubernetes-group-version-kind"]).toEqual(
      { group: "", version: "v1", kind: "Event" },
    );
    expect(body.components.schemas["io.k8s.api.core.v1.Event"]).toMatchObject({ type: "object" });
    const missing = await get("/openapi/v3/apis/example.com/v1");
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ kind: "Status", reason: "NotFound" });
  });
});

describe("OpenAPI v2", () => {
  it("serves JSON definitions, and 406 to a client that takes only protobuf", async () => {
    const { status, body } = await get("/openapi/v2");
    expect(status).toBe(200);
    expect(body.swagger).toBe("2.0");
    expect(body.definitions["io.qr-platform.v1alpha1.CustomDomain"].properties.status.properties.conditions.type).toBe(
      "array",
    );

    const protobuf = await get("/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf");
    expect(protobuf.status).toBe(406);
    expect(protobuf.body).toMatchObject({ kind: "Status", reason: "NotAcceptable", code: 406 });
  });
});
