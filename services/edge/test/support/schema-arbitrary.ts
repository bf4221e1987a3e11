// fast-check arbitraries from the OpenAPI document's JSON Schemas, for the generated-request suite: values
// a schema accepts, and values it does not. Covers the keywords our request schemas use.
import fc from "fast-check";
import { resolveRef, type DocNode } from "./openapi.js";

/** A value the schema accepts (our schemas' keywords: type, enum, const, pattern, format, bounds, oneOf, properties). */
export function validValue(schemaOrRef: DocNode, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolveRef(schemaOrRef);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]));
  if (schema.oneOf || schema.anyOf) {
    const options = (schema.oneOf ?? schema.anyOf) as DocNode[];
    // A branch with only `required` narrows the object the schema itself describes.
    if (options.every((o) => !o.type && !o.$ref && o.required)) {
      return fc.oneof(...options.map((o) => objectValue({ ...schema, oneOf: undefined, required: [...(schema.required ?? []), ...o.required] }, depth, o.required)));
    }
    return fc.oneof(...options.map((o) => validValue(o, depth + 1)));
  }
  const type = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (type.length > 1) return fc.oneof(...type.map((t: string) => validValue({ ...schema, type: t }, depth)));
  switch (type[0]) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
    case "number":
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case "string":
      return stringValue(schema);
    case "array":
      return fc.array(validValue(schema.items ?? {}, depth + 1), { maxLength: Math.min(schema.maxItems ?? 5, 5) });
    case "object":
      return objectValue(schema, depth);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** An object with only the schema's required properties, each valid: the plainest request there is. */
export function minimalValue(schemaOrRef: DocNode): fc.Arbitrary<unknown> {
  const schema = resolveRef(schemaOrRef);
  const required: string[] = schema.required ?? [];
  return fc.record(Object.fromEntries(required.map((name) => [name, validValue(schema.properties[name])])));
}

function stringValue(schema: DocNode): fc.Arbitrary<string> {
  const maxLength = Math.min(schema.maxLength ?? 60, 200);
  if (schema.format === "uuid") return fc.uuid();
  if (schema.format === "uri") return fc.webUrl({ validSchemes: ["https", "http"] }).filter((u) => u.length <= maxLength);
  // Calendar dates within a few years of now, so ranges built from two of them are sometimes short enough to answer.
  if (schema.format === "date") {
    const year = new Date().getUTCFullYear();
    return fc
      .date({ min: new Date(Date.UTC(year - 2, 0, 1)), max: new Date(Date.UTC(year + 1, 11, 31)), noInvalidDate: true })
      .map((date) => date.toISOString().slice(0, 10));
  }
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= (schema.minLength ?? 0) && s.length <= maxLength);
  return fc.string({ minLength: schema.minLength ?? 0, maxLength, unit: "grapheme" });
}

function objectValue(schema: DocNode, depth: number, mustHave: string[] = []): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries((schema.properties ?? {}) as Record<string, DocNode>);
  if (depth > 4) return fc.constant({});
  const required = new Set<string>([...(schema.required ?? []), ...mustHave]);
  const record: Record<string, fc.Arbitrary<unknown>> = Object.fromEntries(properties.map(([name, s]) => [name, validValue(s, depth + 1)]));
  return fc.record(record, { requiredKeys: properties.map(([name]) => name).filter((name) => required.has(name)) });
}

/** A value that breaks the schema somewhere: a wrong type, a field it does not take, or a bound crossed. */
export function invalidValue(schemaOrRef: DocNode): fc.Arbitrary<unknown> {
  const schema = resolveRef(schemaOrRef);
  const wrongType = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 }), fc.string({ maxLength: 5 }));
  if (schema.type !== "object") return wrongType.filter((v) => typeof v !== schema.type);
  const properties = Object.keys(schema.properties ?? {});
  return fc.oneof(
    // Not an object at all.
    fc.oneof(fc.integer(), fc.string(), fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }), fc.constant(null)),
    // A field the operation does not take.
    validValue(schema).map((v) => ({ ...(v as object), unexpected_field: 1 })),
    // A known field with a value of a type it never takes.
    fc.tuple(validValue(schema), fc.constantFrom(...properties)).map(([v, name]) => ({ ...(v as object), [name]: wrongTypeFor(schema.properties[name]) })),
    // A required field missing.
    ...(schema.required?.length
      ? [fc.tuple(validValue(schema), fc.constantFrom(...(schema.required as string[]))).map(([v, name]) => {
          const copy = { ...(v as Record<string, unknown>) };
          delete copy[name];
          return copy;
        })]
      : []),
  );
}

/** The JSON types a schema admits, looking through references and alternatives. */
function typesOf(schemaOrRef: DocNode): Set<string> {
  const schema = resolveRef(schemaOrRef);
  if (schema.enum || schema.pattern || schema.format) return new Set([schema.type ?? "string"]);
  const alternatives = (schema.oneOf ?? schema.anyOf) as DocNode[] | undefined;
  if (alternatives) return new Set(alternatives.flatMap((a) => [...typesOf(a)]));
  const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? "object"];
  return new Set(types.flatMap((t: string) => (t === "integer" ? ["integer", "number"] : [t])));
}

/** A value whose JSON type the schema does not admit. */
function wrongTypeFor(schema: DocNode): unknown {
  const admitted = typesOf(schema);
  const candidates: [string, unknown][] = [
    ["object", { unexpected: true }],
    ["array", [1]],
    ["boolean", true],
    ["number", 1.5],
    ["string", "not-this"],
  ];
  return candidates.find(([type]) => !admitted.has(type))![1];
}

