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
      return fc.oneof(
        ...options.map((o) =>
          objectValue(
            { ...schema, oneOf: undefined, required: [...(schema.required ?? []), ...o.required] },
            depth,
            o.required,
          ),
        ),
      );
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
      return fc.double({
        min: schema.minimum ?? -1e6,
        max: schema.maximum ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
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
  if (schema.format === "uri")
    return fc.webUrl({ validSchemes: ["https", "http"] }).filter((u) => u.length <= maxLength);
  // Calendar dates within a few years of now, so ranges built from two of them are sometimes short enough to answer.
  if (schema.format === "date") {
    const year = new Date().getUTCFullYear();
    return fc
      .date({ min: new Date(Date.UTC(year - 2, 0, 1)), max: new Date(Date.UTC(year + 1, 11, 31)), noInvalidDate: true })
      .map((date) => date.toISOString().slice(0, 10));
  }
  if (schema.pattern)
    return fc
      .stringMatching(new RegExp(schema.pattern))
      .filter((s) => s.length >= (schema.minLength ?? 0) && s.length <= maxLength);
  // Mostly text people write, sometimes any UTF-16 at all (NUL, controls, lone surrogates): refused or stored as sent.
  return fc.oneof(
    { arbitrary: fc.string({ minLength: schema.minLength ?? 0, maxLength, unit: "grapheme" }), weight: 3 },
    { arbitrary: fc.string({ minLength: schema.minLength ?? 0, maxLength, unit: "binary" }), weight: 1 },
  );
}

function objectValue(schema: DocNode, depth: number, mustHave: string[] = []): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries((schema.properties ?? {}) as Record<string, DocNode>);
  if (depth > 4) return fc.constant({});
  const required = new Set<string>([...(schema.required ?? []), ...mustHave]);
  const record: Record<string, fc.Arbitrary<unknown>> = Object.fromEntries(
    properties.map(([name, s]) => [name, validValue(s, depth + 1)]),
  );
  return fc.record(record, { requiredKeys: properties.map(([name]) => name).filter((name) => required.has(name)) });
}

/** A value that breaks the schema somewhere: a wrong type, a field it does not take, or a bound crossed. */
export function invalidValue(schemaOrRef: DocNode): fc.Arbitrary<unknown> {
  const schema = resolveRef(schemaOrRef);
  const wrongType = fc.oneof(
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.integer(), { maxLength: 2 }),
    fc.string({ maxLength: 5 }),
  );
  if (schema.type !== "object") return wrongType.filter((v) => typeof v !== schema.type);
  const properties = Object.keys(schema.properties ?? {});
  return fc.oneof(
    // Not an object at all.
    fc.oneof(fc.integer(), fc.string(), fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }), fc.constant(null)),
    // A field the operation does not take.
    validValue(schema).map((v) => ({ ...(v as object), unexpected_field: 1 })),
    // A known field with a value of a type it never takes.
    fc
      .tuple(validValue(schema), fc.constantFrom(...properties))
      .map(([v, name]) => ({ ...(v as object), [name]: wrongTypeFor(schema.properties[name]) })),
    // A required field missing.
    ...(schema.required?.length
      ? [
          fc.tuple(validValue(schema), fc.constantFrom(...(schema.required as string[]))).map(([v, name]) => {
            const copy = { ...(v as Record<string, unknown>) };
            delete copy[name];
            return copy;
          }),
        ]
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

/** Text from the whole of UTF-16, NUL, the other controls and lone surrogates included. */
export const anyText = (maxLength = 80): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ maxLength, unit: "binary" }),
    fc.constantFrom(
      "\u0000",
      "a\u0000b",
      "\ud800",
      "x\udfff",
      "\ufeffname",
      "\u0007",
      "\u001b[2J",
      "\r\n",
      "\u2028",
      "\u00a0padded\u00a0",
      "\ud83d\ude00",
    ),
  );

/** Numbers at and past every integer width a field may be stored in (int32, int64, doubles' exact range) and non-integers. */
export const anyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    2 ** 31 - 1,
    2 ** 31,
    -(2 ** 31),
    -(2 ** 31) - 1,
    2 ** 32,
    2 ** 53 - 1,
    2 ** 53,
    -(2 ** 53),
    2 ** 63,
    -(2 ** 63),
    2 ** 64,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    Number.MIN_VALUE,
    0.5,
    -0.5,
    1.000001,
    -1,
    0,
    -0,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** Calendar dates across the whole calendar JavaScript knows, some that do not exist, and years outside 0000..9999. */
export const anyDate: fc.Arbitrary<string> = fc.oneof(
  fc
    .record({
      year: fc.integer({ min: 0, max: 9999 }),
      month: fc.integer({ min: 0, max: 13 }),
      day: fc.integer({ min: 0, max: 32 }),
    })
    .map(
      ({ year, month, day }) =>
        `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`,
    ),
  fc.constantFrom(
    "0000-01-01",
    "0001-01-01",
    "1969-12-31",
    "1970-01-01",
    "9999-12-31",
    "+275760-09-13",
    "-271821-04-20",
    "+010000-01-01",
    "2025-02-29",
    "2024-02-29",
  ),
);

/** A field of a request body or query that takes a scalar, with the dotted path to it and its schema. */
export interface Leaf {
  path: string[];
  schema: DocNode;
  /** The nearest description: the field's own, or its array's for an item. */
  description: string;
  type: "string" | "integer" | "number";
}

/** Every string, integer and number field a request schema has, nested objects and array items (as `0`) included. */
export function leavesOf(schemaOrRef: DocNode, path: string[] = [], depth = 0, inherited = ""): Leaf[] {
  const schema = resolveRef(schemaOrRef);
  if (depth > 6) return [];
  const description: string = schemaOrRef.description ?? schema.description ?? inherited;
  const alternatives = ((schema.oneOf ?? schema.anyOf ?? []) as DocNode[]).flatMap((a) =>
    leavesOf(a, path, depth + 1, description),
  );
  const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  const own: Leaf[] = (["string", "integer", "number"] as const)
    .filter((t) => types.includes(t))
    .map((type) => ({ path, schema, type, description }));
  const items = schema.items ? leavesOf(schema.items, [...path, "0"], depth + 1, description) : [];
  const properties = Object.entries((schema.properties ?? {}) as Record<string, DocNode>).flatMap(([name, s]) =>
    leavesOf(s, [...path, name], depth + 1),
  );
  const all = [...own, ...alternatives, ...items, ...properties];
  return all.filter(
    (leaf, i) =>
      all.findIndex((other) => other.path.join(".") === leaf.path.join(".") && other.type === leaf.type) === i,
  );
}

/** A copy of a JSON value with `value` at `path`, objects and arrays made on the way (`0` is an array's first item). */
export function withValueAt(target: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string, ...string[]];
  if (head === "0") return [withValueAt(Array.isArray(target) ? target[0] : undefined, rest, value)];
  const object =
    target !== null && typeof target === "object" && !Array.isArray(target) ? (target as Record<string, unknown>) : {};
  return { ...object, [head]: withValueAt(object[head], rest, value) };
}

/** The value at a dotted path of a JSON value, or undefined. */
export function valueAt(target: unknown, path: string[]): unknown {
  return path.reduce<unknown>(
    (node, key) => (node !== null && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined),
    target,
  );
}

/**
 * Whether a string field is free text that must read back exactly as sent (no format, pattern or enum
 * that the API may normalise), and whether it is documented as trimmed.
 */
export function freeText(leaf: Leaf): { trimmed: boolean } | undefined {
  if (leaf.type !== "string" || leaf.schema.format || leaf.schema.pattern || leaf.schema.enum) return undefined;
  return { trimmed: /trimmed/i.test(leaf.description) };
}

/** A string percent-encoded for a URL, lone surrogates as the bytes a careless encoder sends (WTF-8), not a thrown URIError. */
export function encodeAnyText(text: string): string {
  if (text.isWellFormed()) return encodeURIComponent(text);
  return Array.from(text, (char) => {
    if (char.isWellFormed()) return encodeURIComponent(char);
    const unit = char.charCodeAt(0);
    return [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
      .map((b) => `%${b.toString(16).toUpperCase()}`)
      .join("");
  }).join("");
}
