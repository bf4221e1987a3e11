// The OpenAPI document: that it is a sound OpenAPI 3.1 description of v1, that the edge serves it and a
// reference page without a key, and that the client generated from it calls the real API.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import openapiTS from "openapi-typescript";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it, vi } from "vitest";
import { parse } from "yaml";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import type { Workspace } from "@qrplatform/api-client";
import { call, typedClient } from "./support/http.js";
import {
  componentSchemaValidator,
  documentedOperations,
  OPENAPI_FILE,
  openApiDocument,
  OpenApiMismatchError,
  resolveRef,
  schemaValidator,
  validateResponse,
  type DocNode,
} from "./support/openapi.js";
import { startStack, type Stack } from "./support/stack.js";

/** Every node of the document with the JSON pointer it sits at. */
function* nodesOf(node: unknown, pointer = "#"): Generator<[string, DocNode]> {
  if (!node || typeof node !== "object") return;
  yield [pointer, node as DocNode];
  for (const [key, value] of Object.entries(node))
    yield* nodesOf(value, `${pointer}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`);
}

const PUBLIC_OPERATION = "getOpenApiDocument";

describe("the OpenAPI document", () => {
  it("is OpenAPI 3.1 that passes Redocly's structural rules without a warning", async () => {
    expect(openApiDocument).toMatchObject({
      openapi: "3.1.0",
      info: { version: "1.0.0" },
      servers: [{ url: "/api/v1" }],
    });
    const warnings: unknown[] = [];
    const warn = vi.spyOn(console, "warn").mockImplementation((...args) => void warnings.push(args));
    const error = vi.spyOn(console, "error").mockImplementation((...args) => void warnings.push(args));
    try {
      // openapi-typescript lints with Redocly (struct and no-unresolved-refs are errors) before generating.
      await openapiTS(pathToFileURL(OPENAPI_FILE));
    } finally {
      warn.mockRestore();
      error.mockRestore();
    }
    expect(warnings).toEqual([]);
  });

  it("resolves every $ref", () => {
    const refs = [...nodesOf(openApiDocument)].filter(([, node]) => typeof node.$ref === "string");
    expect(refs.length).toBeGreaterThan(100);
    for (const [pointer, node] of refs) expect(() => resolveRef(node), pointer).not.toThrow();
  });

  it("describes exactly the operations of v1, with stable operationIds", () => {
    const operations = documentedOperations().map(
      ({ method, path, operation }) => `${method.toUpperCase()} ${path} ${operation.operationId}`,
    );
    expect(operations.sort()).toEqual(
      [
        "GET /openapi.json getOpenApiDocument",
        "GET /account getAccount",
        "GET /workspaces listWorkspaces",
        "POST /workspaces createWorkspace",
        "GET /workspaces/{workspace_id} getWorkspace",
        "PATCH /workspaces/{workspace_id} updateWorkspace",
        "DELETE /workspaces/{workspace_id} deleteWorkspace",
        "GET /workspaces/{workspace_id}/qr-codes listWorkspaceQrCodes",
        "POST /workspaces/{workspace_id}/qr-codes createQrCode",
        "POST /workspaces/{workspace_id}/qr-codes/bulk bulkCreateQrCodes",
        "GET /workspaces/{workspace_id}/qr-codes/export exportWorkspaceQrCodes",
        "GET /qr-codes listQrCodes",
        "POST /qr-codes/preview previewQrCode",
        "GET /qr-codes/{id} getQrCode",
        "PATCH /qr-codes/{id} updateQrCode",
        "DELETE /qr-codes/{id} deleteQrCode",
        "GET /qr-codes/{id}/analytics getQrCodeAnalytics",
        "GET /qr-codes/{id}/resolve resolveQrCode",
        "GET /qr-codes/{id}/export exportQrCode",
        "GET /domains listDomains",
        "GET /webhooks listWebhookEndpoints",
        "POST /webhooks createWebhookEndpoint",
        "GET /webhooks/{id} getWebhookEndpoint",
        "PATCH /webhooks/{id} updateWebhookEndpoint",
        "DELETE /webhooks/{id} deleteWebhookEndpoint",
        "POST /webhooks/{id}/rotate-secret rotateWebhookEndpointSecret",
        "GET /webhooks/{id}/deliveries listWebhookDeliveries",
        "GET /webhooks/{id}/deliveries/{delivery_id} getWebhookDelivery",
      ].sort(),
    );
  });

  it("gives every operation a key with one scope and every error it can answer", () => {
    const scheme = openApiDocument.components.securitySchemes.apiKey;
    expect(scheme).toMatchObject({ type: "http", scheme: "bearer" });
    for (const { method, path, operation } of documentedOperations()) {
      const where = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(operation.responses);
      const item = openApiDocument.paths[path];
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map(resolveRef);
      expect(operation.summary, where).toEqual(expect.any(String));
      expect(
        statuses.filter((s) => s.startsWith("2")),
        where,
      ).toHaveLength(1);
      for (const status of statuses) {
        const response = resolveRef(operation.responses[status]);
        expect(resolveRef(response.headers?.["X-Request-ID"] ?? {}).required, `${where} ${status} X-Request-ID`).toBe(
          true,
        );
        if (status === "201") expect(response.headers?.Location, `${where} Location`).toBeDefined();
        if (status === "401")
          expect(resolveRef(response.headers?.["WWW-Authenticate"] ?? {}).required, where).toBe(true);
        if (status === "429")
          expect(Object.keys(response.headers)).toEqual(
            expect.arrayContaining(["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]),
          );
      }
      if (operation.operationId === PUBLIC_OPERATION) {
        expect(operation.security, where).toEqual([]);
        continue;
      }

      const scope = operation["x-required-scope"];
      expect(scope, where).toMatch(/^[a-z_]+:(read|write)$/);
      expect(operation.security, where).toEqual([{ apiKey: [scope] }]);
      expect(scheme.description, where).toContain(`\`${scope}\``);
      expect(operation.description, where).toContain(`\`${scope}\``);
      expect(statuses, where).toEqual(expect.arrayContaining(["401", "403", "429", "500", "503"]));
      if (parameters.some((p) => p.in === "path" || p.in === "query") || operation.requestBody)
        expect(statuses, where).toContain("400");
      if (parameters.some((p) => p.in === "path")) expect(statuses, where).toContain("404");
      for (const status of ["413", "415"])
        expect(statuses.includes(status), `${where} ${status}`).toBe(Boolean(operation.requestBody));
      for (const p of parameters.filter((p) => p.in === "path"))
        expect(p.schema, `${where} ${p.name}`).toEqual({ type: "string", format: "uuid" });
      if (operation.requestBody) {
        const schema = resolveRef(operation.requestBody.content["application/json"].schema);
        expect(schema.additionalProperties, `${where} request body`).toBe(false);
      }
    }
  });

  it("compiles every schema under Ajv's strict mode", () => {
    for (const name of Object.keys(openApiDocument.components.schemas))
      expect(() => componentSchemaValidator(name), name).not.toThrow();
    const inline = [...nodesOf(openApiDocument.paths), ...nodesOf(openApiDocument.components)].filter(
      ([pointer, node]) => /\/(schema)$/.test(pointer) && typeof node === "object",
    );
    expect(inline.length).toBeGreaterThan(30);
    for (const [pointer, schema] of inline) expect(() => schemaValidator(schema), pointer).not.toThrow();
  });

  it("lists in the Error schema every code the error responses can carry", () => {
    const table: string = openApiDocument.components.schemas.Error.properties.error.properties.code.description;
    const listed = new Set([...table.matchAll(/^\| `([a-z0-9_]+)` \| (\d{3}) \|/gm)].map((m) => m[1]));
    const used = new Set<string>();
    for (const [, node] of nodesOf(openApiDocument.components.schemas)) {
      const code = node.properties?.error?.properties?.code;
      if (code?.const) used.add(code.const);
      for (const value of code?.enum ?? []) used.add(value);
    }
    expect(used.size).toBeGreaterThan(15);
    expect([...used].filter((code) => !listed.has(code))).toEqual([]);
    expect([...listed].filter((code) => !used.has(code!))).toEqual([]);
  });

  it("lets the response validator catch what the document does not describe", () => {
    const headers = {
      "x-request-id": "req_1",
      "cache-control": "no-store",
      "content-type": "application/json; charset=utf-8",
    };
    const workspace = {
      id: "6f1c2b1e-0000-4000-8000-000000000000",
      account_id: "6f1c2b1e-0000-4000-8000-000000000001",
      name: "W",
      slug: "w",
      description: null,
      logo_url: null,
      qr_code_count: 0,
      created_at: "2026-01-01T00:00:00.000Z",
      updated_at: "2026-01-01T00:00:00.000Z",
    };
    expect(validateResponse("GET", `/workspaces/${workspace.id}`, 200, headers, workspace)).toBe(
      "getWorkspace (GET /workspaces/{workspace_id})",
    );
    const rejected = (fn: () => unknown) => expect(fn).toThrow(OpenApiMismatchError);
    rejected(() => validateResponse("GET", `/workspaces/${workspace.id}`, 200, headers, { ...workspace, extra: 1 }));
    rejected(() =>
      validateResponse(
        "GET",
        `/workspaces/${workspace.id}`,
        200,
        { ...headers, "cache-control": "max-age=60" },
        workspace,
      ),
    );
    rejected(() => validateResponse("GET", `/workspaces/${workspace.id}`, 418, headers, workspace));
    rejected(() =>
      validateResponse("GET", "/account", 404, headers, {
        error: { code: "not_found", message: "m", request_id: "req_1" },
      }),
    );
    const notFound = { error: { code: "route_not_found", message: "m", request_id: "req_1" } };
    expect(() => validateResponse("GET", "/links", 404, headers, notFound)).not.toThrow();
    rejected(() =>
      validateResponse("GET", "/links", 404, headers, { error: { ...notFound.error, request_id: "other" } }),
    );
    rejected(() => validateResponse("GET", "/links", 200, headers, {}));
    const notAllowed = { error: { code: "method_not_allowed", message: "m", request_id: "req_1" } };
    expect(() =>
      validateResponse("PUT", "/workspaces", 405, { ...headers, allow: "GET, POST, HEAD, OPTIONS" }, notAllowed),
    ).not.toThrow();
    rejected(() =>
      validateResponse("PUT", "/workspaces", 405, { ...headers, allow: "GET, HEAD, OPTIONS" }, notAllowed),
    );
    rejected(() => validateResponse("PUT", "/workspaces", 405, headers, notAllowed));
  });
});

describe("the edge serving its description", () => {
  let stack: Stack;
  let root: string;

  /** A new account on a plan with API access and a key with every scope. */
  async function newKey(): Promise<string> {
    const { account } = await stack.admin.createAccount({
      name: "Typed Co",
      subscriptionTier: SubscriptionTier.ORIGIN,
    });
    const { secret } = await stack.admin.createApiKey({ accountId: account!.id, scopes: [] });
    return secret;
  }

  beforeAll(async () => {
    stack = await startStack("in-process");
    root = stack.baseUrl.replace(/\/api\/v1$/, "");
  }, 120_000);
  afterAll(() => stack?.close());

  it("serves the document at /api/v1/openapi.json without a key, equal to the YAML", async () => {
    const yaml = parse(readFileSync(OPENAPI_FILE, "utf8"));
    const withAndWithoutKey: Record<string, string>[] = [{}, { authorization: "Bearer not-a-key" }];
    for (const headers of withAndWithoutKey) {
      const res = await call(stack.baseUrl, "GET", "/openapi.json", { headers });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(res.headers.get("cache-control")).toBe("public, max-age=300");
      expect(res.body).toEqual(yaml);
    }
    const head = await call(stack.baseUrl, "HEAD", "/openapi.json");
    expect(head.status).toBe(200);
    const post = await call(stack.baseUrl, "POST", "/openapi.json", { body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  it("serves a reference page at /docs that loads only local files", async () => {
    const page = await fetch(`${root}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).toContain('data-openapi-url="/api/v1/openapi.json"');

    const linked = [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(linked).toEqual(
      expect.arrayContaining(["/docs/assets/swagger-ui.css", "/docs/assets/swagger-ui-bundle.js", "/docs/init.js"]),
    );
    for (const path of linked) {
      expect(path, path).toMatch(/^\/docs\//);
      const asset = await fetch(`${root}${path}`);
      expect(asset.status, path).toBe(200);
      const type = asset.headers.get("content-type");
      if (path.endsWith(".js")) expect(type, path).toMatch(/^(text|application)\/javascript/);
      if (path.endsWith(".css")) expect(type, path).toMatch(/^text\/css/);
      const text = await asset.text();
      if (path === "/docs/init.js") {
        expect(text).not.toMatch(/https?:\/\//);
        expect(text).toContain("dataset.openapiUrl");
      }
    }

    // swagger-ui-dist's own page and initializer point at a demo document on the internet: never served.
    for (const path of [
      "/docs/assets/index.html",
      "/docs/assets/swagger-initializer.js",
      "/docs/assets/%2e%2e/package.json",
    ]) {
      expect((await fetch(`${root}${path}`)).status, path).toBe(404);
    }
  });

  it("works with the generated typed client", async () => {
    const client = typedClient(stack.baseUrl, await newKey());

    const created = await client.POST("/workspaces", {
      body: { name: "Typed workspace", description: "From the client" },
    });
    expectTypeOf(created.data).toEqualTypeOf<Workspace | undefined>();
    expect(created.response.status).toBe(201);
    const workspace = created.data!;
    expect(workspace).toMatchObject({
      name: "Typed workspace",
      slug: "typed-workspace",
      description: "From the client",
      qr_code_count: 0,
    });
    expect(created.response.headers.get("location")).toBe(`/api/v1/workspaces/${workspace.id}`);

    const read = await client.GET("/workspaces/{workspace_id}", { params: { path: { workspace_id: workspace.id } } });
    expect(read.data).toEqual(workspace);

    const list = await client.GET("/workspaces", { params: { query: { limit: 10 } } });
    expectTypeOf(list.data!.next_cursor).toEqualTypeOf<string | null>();
    expect(list.data).toEqual({ data: [workspace], next_cursor: null });

    const missing = await client.GET("/workspaces/{workspace_id}", {
      params: { path: { workspace_id: "6f1c2b1e-0000-4000-8000-000000000000" } },
    });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error).toMatchObject({ code: "not_found", details: { resource: "workspace" } });

    // @ts-expect-error the generated types refuse a body the document does not allow
    const invalid = await client.POST("/workspaces", { body: { name: 5 } });
    expect(invalid.response.status).toBe(400);
    expect(invalid.error?.error.code).toBe("validation_error");
  });
});
