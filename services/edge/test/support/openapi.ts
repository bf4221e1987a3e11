// The OpenAPI document as the REST tests' oracle: every response a test receives must be one the
// document describes, with its status, headers and body schema. http.ts runs every response through
// validateResponse, so both REST suites check the document and the implementation against each other.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { parse } from "yaml";

// ajv-formats is CommonJS with `exports.default`; under Node's ESM interop the default import is the module.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** A node of the parsed document; the tests read it structurally. */
export type DocNode = Record<string, any>;

export const OPENAPI_FILE = resolve(import.meta.dirname, "../../openapi/openapi.yaml");

/** The document as parsed from the YAML, shared by the validator and the document's own tests. */
export const openApiDocument: DocNode = parse(readFileSync(OPENAPI_FILE, "utf8"));

/** The path every documented path is relative to, such as "/api/v1". */
export const apiBasePath: string = openApiDocument.servers[0].url;

export const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/** Follows a local `$ref` ("#/components/...") until it reaches the node it names. */
export function resolveRef(node: DocNode): DocNode {
  let current = node;
  const seen = new Set<string>();
  while (typeof current?.$ref === "string") {
    const ref: string = current.$ref;
    if (!ref.startsWith("#/") || seen.has(ref)) throw new Error(`cannot resolve $ref ${ref}`);
    seen.add(ref);
    let target: unknown = openApiDocument;
    for (const token of ref.slice(2).split("/")) {
      const key = decodeURIComponent(token).replaceAll("~1", "/").replaceAll("~0", "~");
      target = target && typeof target === "object" ? (target as DocNode)[key] : undefined;
    }
    if (target === undefined) throw new Error(`$ref ${ref} names nothing in the document`);
    current = target as DocNode;
  }
  return current;
}

/** One operation of the document. */
export interface DocumentedOperation {
  method: (typeof HTTP_METHODS)[number];
  path: string;
  operation: DocNode;
}

/** Every operation of the document. */
export function documentedOperations(): DocumentedOperation[] {
  return Object.entries(openApiDocument.paths as Record<string, DocNode>).flatMap(([path, item]) =>
    HTTP_METHODS.filter((method) => item[method]).map((method) => ({
      method,
      path,
      operation: item[method] as DocNode,
    })),
  );
}

// Schemas are compiled by Ajv under one id, with `#/components/schemas/X` rewritten to point there, so
// Ajv's strict mode can check every keyword (a typo such as `additionalProperty` fails to compile).
const SCHEMAS_ID = "urn:qr-platform:openapi:schemas";

function localized(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(localized);
  if (!node || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => {
      if (key !== "$ref" || typeof value !== "string") return [key, localized(value)];
      const name = /^#\/components\/schemas\/([^/]+)$/.exec(value)?.[1];
      if (!name) throw new Error(`schemas may only refer to #/components/schemas/*, not ${value}`);
      return [key, `${SCHEMAS_ID}#/$defs/${name}`];
    }),
  );
}

const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
addFormats(ajv);
ajv.addSchema({ $id: SCHEMAS_ID, $defs: localized(openApiDocument.components.schemas) as DocNode });

const validators = new WeakMap<object, ValidateFunction>();

/** The compiled validator of a schema object of the document (compiled once, then cached). */
export function schemaValidator(schema: DocNode): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile(localized(schema) as DocNode);
    validators.set(schema, validate);
  }
  return validate;
}

/** The validator of a named component schema. */
export function componentSchemaValidator(name: string): ValidateFunction {
  const schema = openApiDocument.components.schemas[name];
  if (!schema) throw new Error(`no schema ${name} in the document`);
  return schemaValidator({ $ref: `#/components/schemas/${name}` });
}

function describeErrors(errors: ErrorObject[] | null | undefined, where: string): string[] {
  return (errors ?? []).map((e) => {
    const extra = e.keyword === "additionalProperties" ? ` (${e.params.additionalProperty})` : "";
    return `${where}${e.instancePath || ""}: ${e.message}${extra}`;
  });
}

// Express answers under the same route with or without one trailing slash (strict routing is off).
const templates = Object.entries(openApiDocument.paths as Record<string, DocNode>).map(([path, item]) => ({
  path,
  item,
  pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}/?$`),
  literal: !path.includes("{"),
}));

function findPath(path: string): (typeof templates)[number] | undefined {
  const matches = templates.filter((t) => t.pattern.test(path));
  return matches.find((t) => t.literal) ?? matches[0];
}

/** The methods a documented path answers, as the `Allow` header lists them. */
function allowedMethods(item: DocNode): Set<string> {
  const methods = HTTP_METHODS.filter((m) => item[m]).map((m) => m.toUpperCase());
  if (methods.includes("GET")) methods.push("HEAD");
  return new Set([...methods, "OPTIONS"]);
}

/** What the document says about one response: which operation answered, and the response object. */
function documentedResponse(
  method: string,
  path: string,
  status: number,
): { label: string; response?: DocNode; problems: string[] } {
  const found = findPath(path);
  if (!found) {
    const label = `${method} ${path} (a path the document does not list)`;
    if (status !== 404) return { label, problems: [`an unlisted path must answer 404 route_not_found, not ${status}`] };
    return { label, response: resolveRef(openApiDocument.components.responses.RouteNotFound), problems: [] };
  }
  const lower = method.toLowerCase();
  const operation: DocNode | undefined = found.item[lower === "head" ? "get" : lower];
  if (!operation) {
    const label = `${method} ${found.path} (a method the document does not list for this path)`;
    const expected = method === "OPTIONS" ? 204 : 405;
    if (status !== expected) return { label, problems: [`expected ${expected}, got ${status}`] };
    const name = method === "OPTIONS" ? "AllowedMethods" : "MethodNotAllowed";
    return { label, response: resolveRef(openApiDocument.components.responses[name]), problems: [] };
  }
  const label = `${operation.operationId} (${method} ${found.path})`;
  const responses = operation.responses as Record<string, DocNode>;
  const response = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
  if (!response) {
    return {
      label,
      problems: [`status ${status} is not documented; documented: ${Object.keys(responses).join(", ")}`],
    };
  }
  return { label, response: resolveRef(response), problems: [] };
}

function headerValue(headers: Headers | Record<string, string>, name: string): string | null {
  if (headers instanceof Headers) return headers.get(name);
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name.toLowerCase());
  return entry ? entry[1] : null;
}

function checkHeaders(response: DocNode, headers: Headers | Record<string, string>): string[] {
  const problems: string[] = [];
  for (const [name, ref] of Object.entries((response.headers ?? {}) as Record<string, DocNode>)) {
    const header = resolveRef(ref);
    const value = headerValue(headers, name);
    if (value === null) {
      if (header.required) problems.push(`header ${name} is required but missing`);
      continue;
    }
    const schema = resolveRef(header.schema ?? {});
    const typed =
      schema.type === "integer" || schema.type === "number"
        ? /^-?\d+(\.\d+)?$/.test(value)
          ? Number(value)
          : value
        : value;
    const validate = schemaValidator(header.schema ?? {});
    if (!validate(typed))
      problems.push(...describeErrors(validate.errors, `header ${name} (${JSON.stringify(value)})`));
  }
  return problems;
}

function checkBody(response: DocNode, headers: Headers | Record<string, string>, body: unknown): string[] {
  const contentType = headerValue(headers, "content-type");
  const content = response.content as Record<string, DocNode> | undefined;
  const empty = body === undefined || body === "";
  if (!content) return empty ? [] : [`the document describes no body, but one came (${contentType})`];
  const mediaType = Object.keys(content).find((type) => contentType?.split(";")[0]?.trim() === type);
  if (!mediaType) return [`content type ${contentType} is not one of ${Object.keys(content).join(", ")}`];
  const schema = content[mediaType]!.schema;
  if (!schema) return [];
  const validate = schemaValidator(schema);
  return validate(body) ? [] : describeErrors(validate.errors, "body");
}

/** A response that the OpenAPI document does not describe. */
export class OpenApiMismatchError extends Error {
  override name = "OpenApiMismatchError";
}

/**
 * Checks one response of the API against the document and returns the operation's label, or throws
 * OpenApiMismatchError naming the operation, the status and every problem. `pathWithQuery` is relative
 * to the API base path ("/workspaces?limit=2"); `body` is the parsed JSON, or the text of a non-JSON
 * response. A path the document does not list must be 404 `route_not_found`; a listed path with a
 * method it does not list must be 405 (or 204 for OPTIONS) with an `Allow` header naming exactly the
 * documented methods.
 */
export function validateResponse(
  method: string,
  pathWithQuery: string,
  status: number,
  headers: Headers | Record<string, string>,
  body: unknown,
): string {
  const upper = method.toUpperCase();
  const path = pathWithQuery.split("?")[0] || "/";
  const { label, response, problems } = documentedResponse(upper, path, status);
  if (response) {
    problems.push(...checkHeaders(response, headers));
    if (upper !== "HEAD") problems.push(...checkBody(response, headers, body));
    const requestId = (body as DocNode | undefined)?.error?.request_id;
    if (typeof requestId === "string" && requestId !== headerValue(headers, "x-request-id")) {
      problems.push(`error.request_id ${requestId} differs from the X-Request-ID header`);
    }
    const allow = headerValue(headers, "allow");
    const found = findPath(path);
    if (allow !== null && found) {
      const expected = [...allowedMethods(found.item)].sort().join(", ");
      const actual = allow
        .split(",")
        .map((m) => m.trim())
        .sort()
        .join(", ");
      if (actual !== expected) problems.push(`Allow lists ${actual}, but the document has ${expected}`);
    }
  }
  if (problems.length > 0) {
    throw new OpenApiMismatchError(
      `${label} answered ${status}, which does not match the OpenAPI document:\n${problems.map((p) => `  - ${p}`).join("\n")}\n` +
        `body: ${JSON.stringify(body)?.slice(0, 2000)}`,
    );
  }
  return label;
}
