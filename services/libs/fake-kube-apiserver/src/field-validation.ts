// fieldValidation=Strict (what kubectl sends once the OpenAPI v3 document lists the parameter): a write
// naming a field its CRD's schema does not declare is refused, as the real server refuses it, instead of
// being stored. Only unknown fields are checked; the schema's other rules are not (see README.md).
import { parse as parseYaml } from "yaml";
import { patchTypes } from "./patch.js";
import type { ResourceType } from "./resources.js";
import { KubeError } from "./status.js";

type Schema = {
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-embedded-resource"?: boolean;
};

/** The paths (".spec.acountId") of the fields in `value` that `schema` does not declare. */
export function undeclaredFields(value: unknown, schema: Schema, path = ""): string[] {
  if (schema["x-kubernetes-preserve-unknown-fields"]) return [];
  if (Array.isArray(value)) {
    return schema.items ? value.flatMap((item, i) => undeclaredFields(item, schema.items!, `${path}[${i}]`)) : [];
  }
  if (value === null || typeof value !== "object") return [];
  const found: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    const at = `${path}.${key}`;
    const declared = schema.properties?.[key];
    // metadata is ObjectMeta, which the server knows and a CRD's schema leaves open.
    if (path === "" && (key === "metadata" || key === "apiVersion" || key === "kind")) continue;
    if (declared) found.push(...undeclaredFields(child, declared, at));
    else if (typeof schema.additionalProperties === "object")
      found.push(...undeclaredFields(child, schema.additionalProperties, at));
    else if (schema.additionalProperties !== true) found.push(at);
  }
  return found;
}

/**
 * Refuses, with 400 BadRequest as the real server does, a create, update, merge patch or apply under
 * fieldValidation=Strict whose body names fields the CRD's schema of that version does not declare.
 * Types without a schema (the built-ins) and other patch types pass.
 */
export function checkStrictFields(
  type: ResourceType,
  version: string,
  fieldValidation: string | null,
  body: string,
  contentType: string,
): void {
  const schema = type.schemas?.[version];
  if (fieldValidation !== "Strict" || !schema || body.trim() === "") return;
  if (contentType === patchTypes.json || contentType === patchTypes.strategic) return;
  let parsed: unknown;
  try {
    parsed = contentType === patchTypes.apply ? parseYaml(body) : JSON.parse(body);
  } catch {
    return; // the operation itself reports the malformed body
  }
  const unknown = undeclaredFields(parsed, schema as Schema);
  if (unknown.length === 0) return;
  const what = contentType === patchTypes.apply ? "apply configuration" : "request body";
  throw new KubeError(
    "BadRequest",
    `${type.kind} in version "${version}" cannot be handled as a ${type.kind}: strict decoding error: ${unknown
      .map((field) => `unknown field "${field.slice(1)}"`)
      .join(", ")} (in the ${what})`,
  );
}
