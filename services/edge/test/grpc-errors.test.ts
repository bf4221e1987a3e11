// The one mapping from a service's error to the public error: known reasons as themselves, transient
// failures as 503/504 with Retry-After, everything else as a bare 500. No message of an unknown error
// ever reaches the client.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { ErrorInfoSchema } from "@qrplatform/api/common";
import { invalidArgument, MAX_FIELD_PROBLEMS, notFound, serviceError } from "@qrplatform/platform";
import { apiErrorFromGrpc, INTERNAL_REASONS, KNOWN_REASONS, RETRY_AFTER_SECONDS } from "../src/http/grpc-errors.js";

const SECRET = 'relation "catalog.qr_codes" does not exist at 10.0.3.7:5432';

/** Every reason a service may answer with, and what the client must get for it. */
const EXPECTED: [Code, string, number][] = [
  [Code.InvalidArgument, "validation_error", 400],
  [Code.NotFound, "not_found", 404],
  [Code.Unauthenticated, "invalid_api_key", 401],
  [Code.PermissionDenied, "premium_frames_required", 403],
  [Code.ResourceExhausted, "qr_code_limit_reached", 403],
  [Code.ResourceExhausted, "link_limit_reached", 403],
  [Code.AlreadyExists, "slug_taken", 409],
  [Code.AlreadyExists, "domain_taken", 409],
  [Code.Aborted, "slug_conflict", 409],
  [Code.FailedPrecondition, "domain_not_verified", 409],
  [Code.FailedPrecondition, "domain_in_use", 409],
  [Code.FailedPrecondition, "workspace_not_empty", 409],
  [Code.ResourceExhausted, "render_queue_full", 429],
  [Code.Aborted, "idempotency_key_in_progress", 409],
  [Code.FailedPrecondition, "idempotency_key_reused", 422],
  [Code.ResourceExhausted, "webhook_endpoint_limit_reached", 403],
];

/** The (code, reason) pairs the services' sources throw with serviceError, invalidArgument and notFound. */
function reasonsThrownByServices(): [string, string][] {
  const root = resolve(import.meta.dirname, "../..");
  const files = ["tenancy", "catalog", "links", "rendering"].flatMap((service) =>
    readdirSync(join(root, service, "src"), { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts"))
      .map((file) => readFileSync(join(root, service, "src", file), "utf8")),
  );
  const found: [string, string][] = [];
  for (const source of files) {
    for (const [, code, reason] of source.matchAll(/serviceError\(\s*Code\.(\w+),\s*"(\w+)"/g))
      found.push([code!, reason!]);
    if (/\binvalidArgument\(/.test(source)) found.push(["InvalidArgument", "validation_error"]);
    if (/\bnotFound\(/.test(source)) found.push(["NotFound", "not_found"]);
  }
  return found;
}

describe("known reasons", () => {
  it("the table holds exactly the expected reasons", () => {
    const table = Object.entries(KNOWN_REASONS).flatMap(([code, reasons]) =>
      Object.entries(reasons!).map(([reason, outcome]) => [Number(code), reason, outcome.status]),
    );
    expect(table.sort()).toEqual([...EXPECTED].sort());
  });

  it("every reason a service throws is in the table, under the code it is thrown with (or is transient)", () => {
    const thrown = reasonsThrownByServices();
    expect(thrown.length).toBeGreaterThan(10);
    for (const [code, reason] of thrown) {
      const grpcCode = Code[code as keyof typeof Code];
      if (grpcCode === Code.Unavailable) continue; // every UNAVAILABLE is a 503, whatever its reason
      if (INTERNAL_REASONS.has(reason)) {
        expect(apiErrorFromGrpc(serviceError(grpcCode, reason, "internal")).status, `${code} ${reason}`).toBe(500);
        continue;
      }
      expect(KNOWN_REASONS[grpcCode]?.[reason], `${code} ${reason}`).toBeDefined();
    }
  });

  it.each(EXPECTED)("%s %s becomes %s with the reason as code and the service's message", (code, reason, status) => {
    const error = apiErrorFromGrpc(
      serviceError(code, reason, "What happened and what to do.", { metadata: { limit: "5", hostname: "qr.example" } }),
    );
    expect(error.status).toBe(status);
    expect(error.code).toBe(reason);
    expect(error.message).toBe("What happened and what to do.");
    expect(error.details).toEqual({ limit: 5, hostname: "qr.example" });
    // A full render queue and a create still running under the same Idempotency-Key both clear within a second.
    expect(error.headers["Retry-After"]).toBe(
      status === 429 || reason === "idempotency_key_in_progress" ? "1" : undefined,
    );
  });

  it("a workspace that is not empty says how many codes it holds, as a number", () => {
    const error = apiErrorFromGrpc(
      serviceError(Code.FailedPrecondition, "workspace_not_empty", "Not empty.", { metadata: { qr_code_count: "3" } }),
    );
    expect(error).toMatchObject({ status: 409, code: "workspace_not_empty", details: { qr_code_count: 3 } });
  });

  it("an invalid key carries its challenge", () => {
    expect(apiErrorFromGrpc(serviceError(Code.Unauthenticated, "invalid_api_key", "Bad key.")).headers).toEqual({
      "WWW-Authenticate": 'Bearer error="invalid_token"',
    });
  });

  it("field violations become details.fields with public names", () => {
    const error = apiErrorFromGrpc(
      invalidArgument([
        { field: "page_size", reason: "too_big", description: "must be at most 100" },
        { field: "design.frame.label_top", reason: "too_long", description: "at most 30 characters" },
      ]),
    );
    expect(error).toMatchObject({ status: 400, code: "validation_error" });
    expect(error.details).toEqual({
      fields: [
        { field: "limit", reason: "too_big", message: "must be at most 100" },
        { field: "design.frame.labelTop", reason: "too_long", message: "at most 30 characters" },
      ],
    });
    expect(apiErrorFromGrpc(notFound("workspace"))).toMatchObject({
      status: 404,
      code: "not_found",
      details: { resource: "workspace" },
    });
  });

  it("a service lists at most 20 field problems and counts the rest; the edge keeps the count", () => {
    const problems = Array.from({ length: 200_000 }, (_, i) => ({
      field: `tags.${i}`,
      reason: "too_small",
      description: "must not be empty",
    }));
    const error = apiErrorFromGrpc(invalidArgument(problems));
    expect(error.details?.fields).toHaveLength(MAX_FIELD_PROBLEMS);
    expect((error.details!.fields as { field: string }[])[19]).toMatchObject({ field: "tags.19" });
    expect(error.details?.omitted_fields).toBe(200_000 - MAX_FIELD_PROBLEMS);
    expect(JSON.stringify(error.details).length).toBeLessThan(4096);
    expect(apiErrorFromGrpc(invalidArgument(problems.slice(0, 20))).details).not.toHaveProperty("omitted_fields");
  });

  it("an error that lists more field problems than a service would is cut at the edge too", () => {
    const info = create(ErrorInfoSchema, {
      reason: "validation_error",
      fieldViolations: Array.from({ length: 200_000 }, (_, i) => ({
        field: `tags.${i}`,
        reason: "invalid_type",
        description: "must be a string",
      })),
    });
    const error = apiErrorFromGrpc(
      new ConnectError("The request is not valid.", Code.InvalidArgument, undefined, [
        { desc: ErrorInfoSchema, value: info },
      ]),
    );
    expect(error).toMatchObject({ status: 400, code: "validation_error" });
    expect(error.details?.fields).toHaveLength(MAX_FIELD_PROBLEMS);
    expect(error.details?.omitted_fields).toBe(200_000 - MAX_FIELD_PROBLEMS);
  });
});

function expectGeneric(error: ReturnType<typeof apiErrorFromGrpc>, status: number, code: string) {
  expect(error.status).toBe(status);
  expect(error.code).toBe(code);
  expect(error.message).not.toContain("10.0.3.7");
  expect(error.message).not.toMatch(/ECONN|relation|NGHTTP2|stream/);
  expect(error.details).toBeUndefined();
  expect(error.headers["Retry-After"]).toBe(status >= 503 ? String(RETRY_AFTER_SECONDS) : undefined);
}

describe("unknown reasons are ours, never the client's", () => {
  const codes = [
    Code.InvalidArgument,
    Code.NotFound,
    Code.AlreadyExists,
    Code.FailedPrecondition,
    Code.PermissionDenied,
    Code.ResourceExhausted,
    Code.OutOfRange,
    Code.Unauthenticated,
  ];
  it.each(codes)("code %s with an unknown reason is 500 internal_error", (code) => {
    expectGeneric(apiErrorFromGrpc(serviceError(code, "something_new", SECRET)), 500, "internal_error");
  });

  it.each(codes)("code %s without any reason is 500 internal_error", (code) => {
    expectGeneric(apiErrorFromGrpc(new ConnectError(SECRET, code)), 500, "internal_error");
  });

  it("a known reason under another code is not known", () => {
    expectGeneric(apiErrorFromGrpc(serviceError(Code.ResourceExhausted, "slug_taken", SECRET)), 500, "internal_error");
  });

  it.each([Code.Internal, Code.Unknown, Code.DataLoss])("code %s is 500 internal_error", (code) => {
    expectGeneric(apiErrorFromGrpc(new ConnectError(SECRET, code)), 500, "internal_error");
  });
});

describe("transient failures: 503 or 504 with Retry-After", () => {
  const nodeError = (code: string) => Object.assign(new Error(`read ${code}`), { code });

  it.each([
    ["UNAVAILABLE", new ConnectError(SECRET, Code.Unavailable)],
    ["UNAVAILABLE database_unavailable", serviceError(Code.Unavailable, "database_unavailable", SECRET)],
    ["UNAVAILABLE dns_unavailable", serviceError(Code.Unavailable, "dns_unavailable", SECRET)],
    [
      "CANCELED (the service hung up mid-call)",
      new ConnectError("http/2 stream closed with error code CANCEL (0x8)", Code.Canceled),
    ],
    [
      "ABORTED read ECONNRESET",
      new ConnectError("read ECONNRESET", Code.Aborted, undefined, undefined, nodeError("ECONNRESET")),
    ],
    ["ABORTED relayed without a reason", new ConnectError("read ECONNRESET", Code.Aborted)],
    ["ABORTED with an unknown reason", serviceError(Code.Aborted, "serialization_failure", SECRET)],
    [
      "INTERNAL after RST_STREAM",
      new ConnectError(
        "Stream closed with error code NGHTTP2_INTERNAL_ERROR",
        Code.Internal,
        undefined,
        undefined,
        nodeError("ERR_HTTP2_STREAM_ERROR"),
      ),
    ],
    [
      "INTERNAL after GOAWAY",
      new ConnectError(
        "Session closed with error code 2",
        Code.Internal,
        undefined,
        undefined,
        nodeError("ERR_HTTP2_SESSION_ERROR"),
      ),
    ],
    ["UNIMPLEMENTED (a service not yet on the new version)", new ConnectError(SECRET, Code.Unimplemented)],
  ])("%s is 503 service_unavailable", (_, error) => {
    expectGeneric(apiErrorFromGrpc(error), 503, "service_unavailable");
  });

  it("DEADLINE_EXCEEDED is 504 upstream_timeout", () => {
    expectGeneric(
      apiErrorFromGrpc(new ConnectError("the operation timed out", Code.DeadlineExceeded)),
      504,
      "upstream_timeout",
    );
  });
});
