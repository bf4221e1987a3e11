// Test support: a stock @grpc/grpc-js client built from the .proto files with @grpc/proto-loader,
// exactly as any third-party Node client of the platform would build one. Nothing here uses the
// generated TypeScript or Connect, so these clients check the wire contract independently.
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { fromBinary } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { AnySchema, anyUnpack, type Any } from "@bufbuild/protobuf/wkt";
import { ErrorInfoSchema, type ErrorInfo } from "@qrplatform/api/common";
import { REPO_ROOT } from "./platform.js";

export { grpc };

/** The buf module root of the platform's protos. */
export const PROTO_ROOT = join(REPO_ROOT, "proto");

/** The health proto that ships with grpc-health-check, the reference health client package. */
export const HEALTH_PROTO = join(REPO_ROOT, "node_modules/grpc-health-check/proto/health/v1/health.proto");

const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  // google/protobuf/*.proto resolve to the well-known types proto-loader (protobufjs) ships.
  includeDirs: [PROTO_ROOT],
};

/** Every .proto file of the platform, relative to the proto root. */
export function platformProtoFiles(): string[] {
  const dir = join(PROTO_ROOT, "qrplatform");
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".proto"))
    .map((file) => relative(PROTO_ROOT, join(dir, file)))
    .sort();
}

/** A grpc-js client constructor for every service in the platform's protos and grpc.health.v1, by full name. */
export function loadServiceClients(): Map<string, grpc.ServiceClientConstructor> {
  const definition = {
    ...protoLoader.loadSync(platformProtoFiles(), LOADER_OPTIONS),
    ...protoLoader.loadSync(HEALTH_PROTO, LOADER_OPTIONS),
  };
  const loaded = grpc.loadPackageDefinition(definition);
  const clients = new Map<string, grpc.ServiceClientConstructor>();
  for (const name of Object.keys(definition)) {
    const object = name.split(".").reduce<unknown>((node, part) => (node as Record<string, unknown>)?.[part], loaded);
    if (typeof object === "function" && "service" in object) clients.set(name, object as grpc.ServiceClientConstructor);
  }
  return clients;
}

/** Metadata carrying `authorization: Bearer <token>`, or none. */
export function bearer(token?: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  if (token !== undefined) metadata.set("authorization", `Bearer ${token}`);
  return metadata;
}

/** The outcome of a unary call: its response, or the grpc-js ServiceError it failed with. */
export type UnaryOutcome =
  | { ok: true; response: Record<string, unknown>; error?: undefined }
  | { ok: false; error: grpc.ServiceError; response?: undefined };

/** Calls a unary method by its proto name (e.g. "CreateAccount") and never rejects. */
export function callUnary(
  client: grpc.Client,
  method: string,
  request: object,
  metadata: grpc.Metadata = new grpc.Metadata(),
  deadlineMs = 5_000,
): Promise<UnaryOutcome> {
  const fn = (client as unknown as Record<string, unknown>)[method];
  if (typeof fn !== "function") throw new Error(`The client has no method ${method}.`);
  return new Promise((resolve) => {
    fn.call(
      client,
      request,
      metadata,
      { deadline: Date.now() + deadlineMs },
      (error: grpc.ServiceError | null, response: Record<string, unknown>) =>
        resolve(error ? { ok: false, error } : { ok: true, response }),
    );
  });
}

/** The outcome of a server-streaming call: every message, or the grpc-js ServiceError it ended with. */
export type StreamOutcome =
  | { ok: true; messages: Record<string, unknown>[]; error?: undefined }
  | { ok: false; messages: Record<string, unknown>[]; error: grpc.ServiceError };

/** Calls a server-streaming method by its proto name and reads it to its end; never rejects. */
export function callServerStreaming(
  client: grpc.Client,
  method: string,
  request: object,
  metadata: grpc.Metadata = new grpc.Metadata(),
  deadlineMs = 5_000,
): Promise<StreamOutcome> {
  const fn = (client as unknown as Record<string, unknown>)[method];
  if (typeof fn !== "function") throw new Error(`The client has no method ${method}.`);
  const stream = fn.call(client, request, metadata, { deadline: Date.now() + deadlineMs }) as grpc.ClientReadableStream<
    Record<string, unknown>
  >;
  const messages: Record<string, unknown>[] = [];
  return new Promise((resolve) => {
    stream.on("data", (message: Record<string, unknown>) => messages.push(message));
    stream.on("error", (error: grpc.ServiceError) => resolve({ ok: false, messages, error }));
    stream.on("end", () => resolve({ ok: true, messages }));
  });
}

/** Calls a unary method and returns its response, failing with a readable message when the call fails. */
export async function callOk(
  client: grpc.Client,
  method: string,
  request: object,
  metadata?: grpc.Metadata,
): Promise<Record<string, unknown>> {
  const outcome = await callUnary(client, method, request, metadata);
  if (!outcome.ok) {
    throw new Error(
      `${method} failed: ${grpc.status[outcome.error.code]} (${outcome.error.code}) ${outcome.error.details}`,
    );
  }
  return outcome.response;
}

/** A google.rpc.Status as carried, binary-encoded, in the `grpc-status-details-bin` trailer. */
export interface RpcStatus {
  code: number;
  message: string;
  details: Any[];
}

/**
 * Decodes google.rpc.Status (code = 1, message = 2, repeated google.protobuf.Any details = 3). The
 * message is not among the generated schemas, so its three fields are read with the protobuf wire
 * reader; each detail is a real google.protobuf.Any decoded with the well-known-type schema.
 */
export function decodeRpcStatus(bytes: Uint8Array): RpcStatus {
  const reader = new BinaryReader(bytes);
  const status: RpcStatus = { code: 0, message: "", details: [] };
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.Varint) status.code = reader.int32();
    else if (field === 2 && wireType === WireType.LengthDelimited) status.message = reader.string();
    else if (field === 3 && wireType === WireType.LengthDelimited) {
      status.details.push(fromBinary(AnySchema, reader.bytes()));
    } else reader.skip(wireType, field);
  }
  return status;
}

/** The qrplatform ErrorInfo details of a google.rpc.Status. */
export function errorInfosOf(status: RpcStatus): ErrorInfo[] {
  return status.details
    .map((detail) => anyUnpack(detail, ErrorInfoSchema))
    .filter((info): info is ErrorInfo => info !== undefined);
}
