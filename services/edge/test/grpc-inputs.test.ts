// What an internal caller that skips the REST edge can send: for every RPC of every service, every
// string (bad characters or overlong), id, float and timestamp field (found by walking the proto descriptors, nested messages and
// lists included) is given values no column can hold faithfully. Each must be INVALID_ARGUMENT naming
// the field (never INTERNAL or UNKNOWN), and nothing may be stored. int64 fields get their extremes,
// which may be accepted or refused but never fail inside.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create, ScalarType, type DescField, type DescMessage, type DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { errorInfoOf, MAX_REQUEST_TEXT_LENGTH } from "@qrplatform/platform";
import { startStack, type Stack } from "./support/stack.js";

const BAD_TEXT = [
  "\u0000",
  "name\u0000",
  "\u0007bell",
  "\u001b[31m",
  "\ufeffbom",
  "x".repeat(MAX_REQUEST_TEXT_LENGTH + 1),
];
// UTF-8 has no form for a lone surrogate: gRPC's binary encoding sends U+FFFD instead, so a service can
// only see (and must refuse) one over Connect's JSON, where protobuf-es's decoder refuses it before the
// door does (INVALID_ARGUMENT naming the field in its message). Over binary these must merely not fail.
const LONE_SURROGATES = ["\ud800", "tail\udfff"];
const BAD_IDS = ["not-a-uuid", "00000000-0000-0000-0000-00000000000g", "' OR 1=1 --", `${randomUUID()}x`, " "];
const BAD_FLOATS = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
const BAD_TIMESTAMPS = [
  { seconds: 253402300800n, nanos: 0 },
  { seconds: -62135596801n, nanos: 0 },
  { seconds: 9_223_372_036_854_775_807n, nanos: 0 },
  { seconds: 0n, nanos: 1_000_000_000 },
];
const INT64_EXTREMES = [9_223_372_036_854_775_807n, -9_223_372_036_854_775_808n, 2n ** 53n + 1n, -(2n ** 53n) - 1n];

/** One field somewhere in a request, reached through the path of fields (and list elements) above it. */
interface Leaf {
  path: DescField[];
  field: DescField;
  /** The public dotted path the error names, list elements as `.0`. */
  name: string;
}

function isIdField(field: DescField) {
  return field.name === "id" || field.name.endsWith("_id") || field.name.endsWith("_ids");
}

function scalarOf(field: DescField): ScalarType | undefined {
  if (field.fieldKind === "scalar") return field.scalar;
  if (field.fieldKind === "list" && field.listKind === "scalar") return field.scalar;
  return undefined;
}

function messageOf(field: DescField): DescMessage | undefined {
  if (field.fieldKind === "message") return field.message;
  if (field.fieldKind === "list" && field.listKind === "message") return field.message;
  return undefined;
}

/** Every scalar or timestamp field a request holds, nested messages included, to a small depth. */
function leavesOf(desc: DescMessage, path: DescField[] = [], prefix = ""): Leaf[] {
  if (path.length > 4) return [];
  return desc.fields.flatMap((field): Leaf[] => {
    const name = `${prefix}${field.name}${field.fieldKind === "list" ? ".0" : ""}`;
    const message = messageOf(field);
    if (message?.typeName === "google.protobuf.Timestamp" || scalarOf(field) !== undefined)
      return [{ path, field, name }];
    if (message) return leavesOf(message, [...path, field], `${name}.`);
    return [];
  });
}

/** What a leaf is given, and whether the service must refuse it (false: it must only not fail inside). */
function hostileValues(leaf: Leaf, json: boolean): { value: unknown; refused: boolean }[] {
  const message = messageOf(leaf.field);
  if (message?.typeName === "google.protobuf.Timestamp")
    return json ? [] : BAD_TIMESTAMPS.map((value) => ({ value, refused: true }));
  switch (scalarOf(leaf.field)) {
    case ScalarType.STRING:
      return [
        ...[...BAD_TEXT, ...(isIdField(leaf.field) ? BAD_IDS : [])].map((value) => ({ value, refused: true })),
        ...LONE_SURROGATES.map((value) => ({ value, refused: json })),
      ];
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      // Numbers and timestamps travel the same in both encodings; the binary pass tries them.
      if (json) return [];
      return BAD_FLOATS.map((value) => ({ value, refused: true }));
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      if (json) return [];
      return INT64_EXTREMES.map((value) => ({ value, refused: false }));
    default:
      return [];
  }
}

/** A request with the value at the leaf, every message on the way created. */
function requestWith(method: DescMethod, leaf: Leaf, value: unknown) {
  let init: Record<string, unknown> = leafInit(leaf.field, value);
  for (const parent of [...leaf.path].reverse()) init = leafInit(parent, init);
  return create(method.input, init as never);
}

function leafInit(field: DescField, value: unknown): Record<string, unknown> {
  const wrapped = field.fieldKind === "list" ? [value] : value;
  return field.oneof
    ? { [field.oneof.localName]: { case: field.localName, value: wrapped } }
    : { [field.localName]: wrapped };
}

async function callOnce(transport: Transport, method: DescMethod, request: unknown): Promise<ConnectError | undefined> {
  const client = createClient(method.parent, transport) as unknown as Record<
    string,
    (req: unknown, opts?: unknown) => unknown
  >;
  const signal = AbortSignal.timeout(10_000);
  try {
    if (method.methodKind === "unary") await client[method.localName]!(request, { signal });
    else {
      // A stream that passed the door would run until its deadline; the first message is enough.
      for await (const _ of client[method.localName]!(request, { signal }) as AsyncIterable<unknown>) break;
    }
    return undefined;
  } catch (error) {
    return ConnectError.from(error);
  }
}

describe("gRPC inputs", () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack("in-process");
    // Something to find, so an unchecked id would reach real rows.
    await stack.admin.createAccount({ name: "Inputs", subscriptionTier: SubscriptionTier.ENTERPRISE });
  }, 120_000);
  afterAll(() => stack?.close());

  /** The number of rows in each table, to show that refused requests stored nothing. */
  async function rowCounts(): Promise<Record<string, number>> {
    const db = stack.db!;
    const tables = await db.introspection.getTables();
    const counts: Record<string, number> = {};
    for (const table of tables) {
      const name = table.schema ? `${table.schema}.${table.name}` : table.name;
      const row = await db
        .selectFrom(name)
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow();
      counts[name] = Number(row.n);
    }
    return counts;
  }

  it.each([
    ["binary", false],
    ["JSON", true],
  ] as const)(
    "refuses every bad string, id, float and timestamp on every RPC (%s) with INVALID_ARGUMENT naming the field, storing nothing",
    async (encoding, json) => {
      const before = await rowCounts();
      const tried = { rpcs: new Set<string>(), fields: 0, calls: 0, refused: 0 };
      const failures: string[] = [];
      for (const { module, transport: binaryTransport, jsonTransport } of stack.grpcModules!) {
        const transport = json ? jsonTransport : binaryTransport;
        for (const service of module.services) {
          for (const method of service.methods) {
            if (method.methodKind !== "unary" && method.methodKind !== "server_streaming") continue;
            for (const leaf of leavesOf(method.input)) {
              const values = hostileValues(leaf, json);
              if (values.length === 0) continue;
              tried.rpcs.add(`${service.name}/${method.name}`);
              tried.fields++;
              for (const { value, refused } of values) {
                tried.calls++;
                const error = await callOnce(transport, method, requestWith(method, leaf, value));
                const what = `${service.name}/${method.name} ${leaf.name}=${JSON.stringify(String(value).slice(0, 40))}`;
                if (error && [Code.Internal, Code.Unknown, Code.DataLoss, Code.Unavailable].includes(error.code)) {
                  failures.push(`${what}: ${Code[error.code]} ${error.rawMessage}`);
                } else if (refused) {
                  const named =
                    error &&
                    (errorInfoOf(error)?.fieldViolations.some((v) => v.field === leaf.name) ||
                      (json && error.rawMessage.includes(`.${leaf.field.name} from JSON`)));
                  if (error?.code !== Code.InvalidArgument || !named)
                    failures.push(`${what}: ${error ? `${Code[error.code]} ${error.rawMessage}` : "accepted"}`);
                  else tried.refused++;
                }
              }
            }
          }
        }
      }
      expect(failures).toEqual([]);
      expect(await rowCounts()).toEqual(before);
      // The walk reached every service and a realistic number of fields.
      expect(tried.rpcs.size).toBeGreaterThan(25);
      expect(tried.rpcs).toContain("WorkspaceService/DeleteWorkspace");
      console.info(
        `gRPC inputs (${encoding}): ${tried.calls} calls, ${tried.fields} fields, ${tried.rpcs.size} RPCs, ${tried.refused} refused as they must be`,
      );
    },
    300_000,
  );
});
