// Requests generated from the OpenAPI document: for every operation, 100 that the document allows and
// 100 that it does not. None may get a 5xx; every answer must be documented (status, headers, body
// schema, error envelope with its request id), which `call` checks on each; invalid ones must be 4xx.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { call, type ApiResponse } from "./support/http.js";
import { documentedOperations, openApiDocument, resolveRef, type DocNode } from "./support/openapi.js";
import { invalidValue, minimalValue, validValue } from "./support/schema-arbitrary.js";
import { startStack, type Stack } from "./support/stack.js";

const RUNS = 100;

interface GeneratedRequest {
  path: string;
  body?: unknown;
}

describe("generated requests", () => {
  let stack: Stack;
  let key: string;
  /** Ids of resources the key's account has, so valid requests also reach real ones. */
  const existing: Record<string, string[]> = {};

  beforeAll(async () => {
    stack = await startStack("in-process");
    const { account } = await stack.admin.createAccount({ name: `Gen ${randomBytes(3).toString("hex")}`, subscriptionTier: SubscriptionTier.ENTERPRISE });
    ({ secret: key } = await stack.admin.createApiKey({ accountId: account!.id }));
    const { body: workspace } = await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Generated" } });
    const { body: code } = await call(stack.baseUrl, "POST", `/workspaces/${workspace.id}/qr-codes`, {
      key,
      body: { name: "Generated", destination_url: "https://example.com" },
    });
    existing.workspace_id = [workspace.id];
    existing.id = [code.id];
  }, 120_000);
  afterAll(() => stack?.close());

  const parametersOf = (path: string, operation: DocNode): DocNode[] =>
    [...(openApiDocument.paths[path].parameters ?? []), ...(operation.parameters ?? [])].map(resolveRef);

  /** A request the document allows: known or random ids, in-range query values, a body of the request schema. */
  function validRequest(path: string, operation: DocNode): fc.Arbitrary<GeneratedRequest> {
    const parameters = parametersOf(path, operation);
    const pathParams = parameters.filter((p) => p.in === "path");
    const queryParams = parameters.filter((p) => p.in === "query" && p.name !== "cursor");
    const body = operation.requestBody?.content?.["application/json"]?.schema;
    return fc.record({
      ids: fc.tuple(...pathParams.map((p) => fc.oneof(fc.constantFrom(...(existing[p.name] ?? ["00000000-0000-4000-8000-000000000000"])), fc.uuid()))),
      query: fc.tuple(...queryParams.map((p) => fc.option(validValue(p.schema), { nil: undefined }))),
      body: body ? fc.oneof(minimalValue(body), validValue(body)) : fc.constant(undefined),
    }).map(({ ids, query, body: generated }) => ({
      path: withQuery(fillPath(path, pathParams, ids as string[]), queryParams, query as unknown[]),
      body: generated,
    }));
  }

  /** A request the document refuses: a bad id, a bad query value, or a body that breaks the schema. */
  function invalidRequest(path: string, operation: DocNode): fc.Arbitrary<GeneratedRequest> | undefined {
    const parameters = parametersOf(path, operation);
    const pathParams = parameters.filter((p) => p.in === "path");
    const queryParams = parameters.filter((p) => p.in === "query");
    const body = operation.requestBody?.content?.["application/json"]?.schema;
    const ways: fc.Arbitrary<GeneratedRequest>[] = [];
    const valid = validRequest(path, operation);
    if (pathParams.length > 0) {
      // "." and ".." are not ids but path steps: URLs resolve them before any request is sent.
      const badId = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !/^[0-9a-f-]{36}$/i.test(s) && s !== "." && s !== "..");
      ways.push(fc.tuple(valid, badId).map(([req, id]) => ({ ...req, path: fillPath(path, pathParams, pathParams.map(() => id)) })));
    }
    const boundedQuery = queryParams.filter((p) => p.schema && (resolveRef(p.schema).enum || resolveRef(p.schema).type === "integer" || p.name === "cursor" || resolveRef(p.schema).format));
    if (boundedQuery.length > 0) {
      const badValue = fc.oneof(fc.constant("-1"), fc.constant("abc"), fc.constant("99999999"), fc.constant(""), fc.string({ minLength: 1, maxLength: 8 }).map((s) => `x${s}`));
      ways.push(
        fc.tuple(valid, fc.constantFrom(...boundedQuery), badValue).map(([req, param, value]) => ({
          ...req,
          path: `${req.path}${req.path.includes("?") ? "&" : "?"}${param.name}=${encodeURIComponent(value)}`,
        })),
      );
    }
    if (body) ways.push(fc.tuple(valid, invalidValue(body)).map(([req, bad]) => ({ ...req, body: bad === undefined ? null : bad })));
    return ways.length > 0 ? fc.oneof(...ways) : undefined;
  }

  // Deletes go last, so the other operations keep reaching the account's real resources.
  const operations = documentedOperations()
    .filter((o) => o.operation.operationId !== "getOpenApiDocument")
    .sort((a, b) => Number(a.method === "delete") - Number(b.method === "delete"));

  it.each(operations.map((o) => [o.operation.operationId as string, o] as const))("%s: 100 valid and 100 invalid requests, no 5xx, all documented", async (_id, { method, path, operation }) => {
    const statuses: number[] = [];
    const send = async (req: GeneratedRequest): Promise<ApiResponse> => {
      const res = await call(stack.baseUrl, method.toUpperCase(), req.path, { key, body: req.body });
      statuses.push(res.status);
      return res;
    };
    await fc.assert(
      fc.asyncProperty(validRequest(path, operation), async (req) => {
        expect((await send(req)).status).toBeLessThan(500);
      }),
      { numRuns: RUNS },
    );
    // Valid requests also reach the success path, not only 404s for random ids.
    expect(statuses.some((s) => s < 300)).toBe(true);
    const invalid = invalidRequest(path, operation);
    if (invalid) {
      await fc.assert(
        fc.asyncProperty(invalid, async (req) => {
          const res = await send(req);
          expect(res.status, `${method} ${req.path} ${JSON.stringify(req.body)?.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
          expect(res.status).toBeLessThan(500);
        }),
        { numRuns: RUNS },
      );
    }
  }, 120_000);
});

function fillPath(path: string, params: DocNode[], values: string[]): string {
  return params.reduce((p, param, i) => p.replace(`{${param.name}}`, encodeURIComponent(values[i]!)), path);
}

function withQuery(path: string, params: DocNode[], values: unknown[]): string {
  const query = params.flatMap((p, i) => (values[i] === undefined ? [] : [`${p.name}=${encodeURIComponent(String(values[i]))}`]));
  return query.length > 0 ? `${path}?${query.join("&")}` : path;
}
