// The OpenAPI documents kubectl reads: /openapi/v3 (a root naming one document per group version, each
// at /openapi/v3/apis/<group>/<version>) for `kubectl explain` and for learning that a PATCH accepts
// fieldValidation (so `kubectl apply` leaves validation to the server), and /openapi/v2 as JSON. Custom
// resources are described by their CRD's openAPIV3Schema; the built-in types the fake serves by an open
// object, since the fake holds no schema for them.
import { createHash } from "node:crypto";
import { apiVersionOf, type ResourceRegistry, type ResourceType } from "./resources.js";
import { KubeError } from "./status.js";

type Schema = Record<string, unknown>;

/** The server-relative path of a group version's v3 document: "api/v1" or "apis/<group>/<version>". */
function groupVersionPath(group: string, version: string): string {
  return group === "" ? `api/${version}` : `apis/${group}/${version}`;
}

/** The definition name the real server uses: the group reversed ("io.qr-platform.v1alpha1.CustomDomain"). */
export function definitionName(type: ResourceType, version: string): string {
  if (type.group === "") return `io.k8s.api.core.${version}.${type.kind}`;
  if (type.builtIn && type.group.endsWith(".k8s.io")) {
    return `io.k8s.api.${type.group.slice(0, -".k8s.io".length)}.${version}.${type.kind}`;
  }
  return `${type.group.split(".").reverse().join(".")}.${version}.${type.kind}`;
}

function schemaOf(type: ResourceType, version: string): Schema {
  const gvk = { "x-kubernetes-group-version-kind": [{ group: type.group, version, kind: type.kind }] };
  const fromCrd = type.schemas?.[version];
  if (fromCrd) return { ...fromCrd, ...gvk };
  return {
    description: `${type.kind} (${apiVersionOf(type.group, version)}); the fake API server holds no schema for it.`,
    type: "object",
    "x-kubernetes-preserve-unknown-fields": true,
    ...gvk,
  };
}

const queryParameter = (name: string, description: string, type = "string") => ({
  name,
  in: "query",
  description,
  schema: { type },
  uniqueItems: true,
});

/** The PATCH parameters kubectl looks for (it sends fieldValidation only where the document lists it). */
const patchParameters = [
  queryParameter("dryRun", "When present, the modifications are not persisted. The only valid value is All."),
  queryParameter("fieldManager", "The name of the actor or entity making the changes; required for apply patches."),
  queryParameter(
    "fieldValidation",
    "How the server treats unknown or duplicate fields in the request: Ignore, Warn or Strict.",
  ),
  queryParameter("force", "Force an apply request: take over the fields other managers own.", "boolean"),
];

function pathsOf(type: ResourceType, version: string, schemaRef: string): Record<string, unknown> {
  const base = `/${groupVersionPath(type.group, version)}${type.namespaced ? "/namespaces/{namespace}" : ""}/${type.plural}`;
  const gvk = { group: type.group, version, kind: type.kind };
  const ok = { "200": { description: "OK", content: { "application/json": { schema: { $ref: schemaRef } } } } };
  const body = { content: { "application/json": { schema: { $ref: schemaRef } } } };
  const operation = (action: string, verb: string, extra: Record<string, unknown> = {}) => ({
    operationId: `${verb}${type.kind}`,
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": gvk,
    responses: ok,
    ...extra,
  });
  const patchBody = {
    content: Object.fromEntries(
      [
        "application/apply-patch+yaml",
        "application/json-patch+json",
        "application/merge-patch+json",
        ...(type.builtIn ? ["application/strategic-merge-patch+json"] : []),
      ].map((media) => [media, { schema: { type: "object" } }]),
    ),
  };
  const item = {
    get: operation("get", "read"),
    put: operation("put", "replace", { requestBody: body }),
    patch: operation("patch", "patch", { parameters: patchParameters, requestBody: patchBody }),
    delete: operation("delete", "delete"),
  };
  return {
    [base]: { get: operation("list", "list"), post: operation("post", "create", { requestBody: body }) },
    [`${base}/{name}`]: item,
    ...(type.statusSubresource
      ? {
          [`${base}/{name}/status`]: {
            get: operation("get", "read", { operationId: `read${type.kind}Status` }),
            put: operation("put", "replace", { operationId: `replace${type.kind}Status`, requestBody: body }),
            patch: operation("patch", "patch", {
              operationId: `patch${type.kind}Status`,
              parameters: patchParameters,
              requestBody: patchBody,
            }),
          },
        }
      : {}),
  };
}

/** The OpenAPI v3 document of one group version; a NotFound KubeError when the fake serves none. */
export function openApiV3Document(registry: ResourceRegistry, group: string, version: string): Schema {
  const types = registry.all().filter((t) => t.group === group && t.versions.includes(version));
  if (types.length === 0) throw new KubeError("NotFound", "the server could not find the requested resource");
  const schemas: Record<string, Schema> = {};
  const paths: Record<string, unknown> = {};
  for (const type of types) {
    const name = definitionName(type, version);
    schemas[name] = schemaOf(type, version);
    Object.assign(paths, pathsOf(type, version, `#/components/schemas/${name}`));
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: "v1.31.0-fake" },
    paths,
    components: { schemas },
  };
}

/** The /openapi/v3 root: each group version's document path, with the hash of its content as clients cache it. */
export function openApiV3Root(registry: ResourceRegistry): Schema {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const [group, versions] of registry.groups()) {
    for (const version of versions) {
      const path = groupVersionPath(group, version);
      const hash = createHash("sha512")
        .update(JSON.stringify(openApiV3Document(registry, group, version)))
        .digest("hex")
        .toUpperCase();
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
    }
  }
  return { paths };
}

/** Splits /openapi/v3/api/v1 and /openapi/v3/apis/<group>/<version> (the segments after "v3"). */
export function groupVersionOfV3Path(rest: string[]): { group: string; version: string } {
  if (rest[0] === "api" && rest.length === 2) return { group: "", version: rest[1]! };
  if (rest[0] === "apis" && rest.length === 3) return { group: rest[1]!, version: rest[2]! };
  throw new KubeError("NotFound", "the server could not find the requested resource");
}

/** The /openapi/v2 document (JSON): every served type's definition. */
export function openApiV2Document(registry: ResourceRegistry): Schema {
  const definitions: Record<string, Schema> = {};
  for (const type of registry.all()) {
    for (const version of type.versions) definitions[definitionName(type, version)] = schemaOf(type, version);
  }
  return { swagger: "2.0", info: { title: "Kubernetes", version: "v1.31.0-fake" }, paths: {}, definitions };
}

/**
 * Whether an Accept header takes the JSON form of /openapi/v2. kubectl (client-go) asks for the protobuf
 * form only; the fake has none and answers such a request 406 Not Acceptable.
 */
export function acceptsJson(accept: string): boolean {
  if (accept.trim() === "") return true;
  return accept
    .split(",")
    .map((range) => range.split(";")[0]!.trim())
    .some((media) => media === "application/json" || media === "*/*" || media === "application/*");
}
