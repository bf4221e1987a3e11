// PATCH bodies: JSON patch (RFC 6902, by fast-json-patch), JSON merge patch (RFC 7386), strategic merge
// patch (merge patch plus the list merge keys below), and the merge of a server-side apply configuration.
import jsonpatch from "fast-json-patch";
import { parse as parseYaml } from "yaml";
import { clone, isPlainObject, type KubeObject } from "./object.js";
import { KubeError } from "./status.js";

/** The PATCH content types the API server understands. */
export const patchTypes = {
  json: "application/json-patch+json",
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
} as const;

/** Applies an RFC 6902 JSON patch: a malformed one is 400, one that does not apply (failed test, missing path) 422. */
export function applyJsonPatch(target: KubeObject, body: string): KubeObject {
  let operations: unknown;
  try {
    operations = JSON.parse(body);
  } catch (err) {
    throw new KubeError("BadRequest", `invalid JSON patch: ${(err as Error).message}`);
  }
  if (!Array.isArray(operations)) throw new KubeError("BadRequest", "a JSON patch must be an array of operations");
  const invalid = jsonpatch.validate(operations as jsonpatch.Operation[]);
  if (invalid) throw new KubeError("BadRequest", `invalid JSON patch: ${invalid.message.split("\n")[0]}`);
  try {
    return jsonpatch.applyPatch(clone(target), operations as jsonpatch.Operation[], true, true).newDocument;
  } catch (err) {
    throw new KubeError("Invalid", `the JSON patch does not apply: ${(err as Error).message.split("\n")[0]}`);
  }
}

function parseObjectBody(body: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    throw new KubeError("BadRequest", `invalid ${what}: ${(err as Error).message}`);
  }
  if (!isPlainObject(parsed)) throw new KubeError("BadRequest", `a ${what} must be a JSON object`);
  return parsed;
}

/** Merges a list under strategic merge patch rules, or returns undefined to replace it as merge patch does. */
type ListMerge = (path: string[], live: unknown[], patch: unknown[]) => unknown[] | undefined;

/** RFC 7386: maps merge recursively, null deletes, everything else (lists included) replaces. */
function mergeInto(target: unknown, patch: unknown, listMerge?: ListMerge, path: string[] = []): unknown {
  if (!isPlainObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    const at = [...path, k];
    if (v === null) {
      delete out[k];
    } else if (listMerge && Array.isArray(v) && Array.isArray(out[k])) {
      out[k] = listMerge(at, out[k] as unknown[], v) ?? clone(v);
    } else {
      out[k] = mergeInto(out[k], v, listMerge, at);
    }
  }
  return out;
}

/** Applies a JSON merge patch (application/merge-patch+json). */
export function applyMergePatch(target: KubeObject, body: string): KubeObject {
  return mergeInto(target, parseObjectBody(body, "merge patch")) as KubeObject;
}

/** Lists of objects merged by a key field, the patchMergeKey of the Kubernetes types. */
const mergeKeys: { path: (p: string[]) => boolean; key: string }[] = [
  { path: (p) => p.join(".") === "metadata.ownerReferences", key: "uid" },
  { path: (p) => p.join(".") === "status.conditions", key: "type" },
];

const strategicLists: ListMerge = (path, live, patch) => {
  if (path.join(".") === "metadata.finalizers") {
    return [...live, ...patch.filter((item) => !live.includes(item))];
  }
  const rule = mergeKeys.find((r) => r.path(path));
  if (!rule) return undefined;
  const merged = [...live];
  for (const item of patch) {
    const key = isPlainObject(item) ? item[rule.key] : undefined;
    const at = merged.findIndex((m) => isPlainObject(m) && key !== undefined && m[rule.key] === key);
    if (at < 0) merged.push(clone(item));
    else merged[at] = mergeInto(merged[at], item);
  }
  return merged;
};

/**
 * Applies a strategic merge patch: a merge patch, except that metadata.finalizers are merged as a set,
 * metadata.ownerReferences by uid and status.conditions by type. Other lists are replaced, and the
 * $patch/$retainKeys/$setElementOrder directives are not supported.
 */
export function applyStrategicMergePatch(target: KubeObject, body: string): KubeObject {
  return mergeInto(target, parseObjectBody(body, "strategic merge patch"), strategicLists) as KubeObject;
}

/** Parses a server-side apply body (YAML, or JSON, which is YAML); it must name apiVersion and kind. */
export function parseApplyConfiguration(body: string): KubeObject {
  let parsed: unknown;
  try {
    parsed = parseYaml(body);
  } catch (err) {
    throw new KubeError("BadRequest", `invalid apply configuration: ${(err as Error).message}`);
  }
  if (!isPlainObject(parsed)) throw new KubeError("BadRequest", "an apply configuration must be an object");
  if (typeof parsed.apiVersion !== "string" || parsed.apiVersion === "") {
    throw new KubeError("BadRequest", "apiVersion must be set in an apply configuration");
  }
  if (typeof parsed.kind !== "string" || parsed.kind === "") {
    throw new KubeError("BadRequest", "kind must be set in an apply configuration");
  }
  if (!isPlainObject(parsed.metadata)) parsed.metadata = {};
  return parsed as KubeObject;
}

/** The live object with an apply configuration laid over it: maps merge, scalars and lists are replaced. */
export function mergeApplyConfiguration(live: KubeObject, config: Record<string, unknown>): KubeObject {
  const merge = (a: unknown, b: unknown): unknown => {
    if (!isPlainObject(b) || !isPlainObject(a)) return clone(b);
    const out: Record<string, unknown> = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = merge(a[k], v);
    return out;
  };
  return merge(live, config) as KubeObject;
}
