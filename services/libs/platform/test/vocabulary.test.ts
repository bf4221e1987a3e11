// The one validation vocabulary: the path map between doors, the id schema that makes ids canonical,
// field rules declared in zod schemas, and the request checks that make every id canonical.
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RecordScansRequestSchema, GetScanTotalsRequestSchema } from "@qrplatform/api/links";
import { CreateQrCodeRequestSchema } from "@qrplatform/api/catalog";
import {
  canonicalizeIds,
  checkedBy,
  fieldProblemsOf,
  invalidArgument,
  errorInfoOf,
  MAX_FIELD_PROBLEMS,
  parsedBy,
  protoFieldPath,
  publicFieldPath,
  requestFieldProblems,
  requiredUuidSchema,
  uuidSchema,
  validate,
} from "../src/index.js";

describe("field paths", () => {
  it("turn protobuf-es local names into proto paths, indexes and keys as they are", () => {
    expect(protoFieldPath(["design", "frame", "labelTop"])).toBe("design.frame.label_top");
    expect(protoFieldPath(["scans", 3, "linkId"])).toBe("scans.3.link_id");
    expect(protoFieldPath(["queryParameters"])).toBe("query_parameters");
    expect(protoFieldPath([])).toBe("");
  });

  it("name proto paths as the REST API does: its own names, camelCase inside design, the rest unchanged", () => {
    const cases: [string, string][] = [
      ["page_size", "limit"],
      ["page_token", "cursor"],
      ["domain_id", "vanity_domain_id"],
      ["from_date", "from"],
      ["to_date", "to"],
      ["design.frame.label_top", "design.frame.labelTop"],
      ["design.corner_square_shape", "design.cornerSquareShape"],
      ["design.logo.data_uri", "design.logo.dataUri"],
      ["destination_url", "destination_url"],
      ["vanity_slug", "vanity_slug"],
      ["tags.3", "tags.3"],
      ["utm.source", "utm.source"],
    ];
    for (const [proto, publicPath] of cases) expect(publicFieldPath(proto), proto).toBe(publicPath);
  });

  it("are proto paths in a service's problems and as sent in the edge's", () => {
    const schema = z.object({ frame: z.object({ labelTop: z.string().max(2) }) });
    const error = schema.safeParse({ frame: { labelTop: "long" } }).error!;
    expect(fieldProblemsOf(error).map((p) => p.field)).toEqual(["frame.label_top"]);
    expect(fieldProblemsOf(error, "as-sent").map((p) => p.field)).toEqual(["frame.labelTop"]);
    const strict = z.strictObject({ name: z.string() });
    expect(fieldProblemsOf(strict.safeParse({ name: "x", extraField: 1 }).error!, "as-sent")).toEqual([
      {
        field: "extraField",
        reason: "unknown_field",
        description: "is not a field of this request; read-only and unknown fields cannot be sent",
      },
    ]);
  });
});

describe("ids", () => {
  const id = randomUUID();

  it("are accepted in any case and given in lower case", () => {
    expect(uuidSchema.parse(id.toUpperCase())).toBe(id);
    expect(uuidSchema.parse(`${id.slice(0, 9).toUpperCase()}${id.slice(9)}`)).toBe(id);
    expect(requiredUuidSchema.parse(id.toUpperCase())).toBe(id);
  });

  it("are refused as invalid_format when not UUIDs, and as required when empty where one is needed", () => {
    const schema = z.object({ accountId: uuidSchema, domainId: requiredUuidSchema });
    expect(fieldProblemsOf(schema.safeParse({ accountId: "nope", domainId: "" }).error!)).toEqual([
      { field: "account_id", reason: "invalid_format", description: "must be a UUID" },
      { field: "domain_id", reason: "required", description: "is required" },
    ]);
    expect(
      fieldProblemsOf(schema.safeParse({ accountId: id, domainId: `${id}x` }).error!).map((p) => p.reason),
    ).toEqual(["invalid_format"]);
  });

  it("are made canonical by the request checks, in nested messages and lists too", () => {
    const upper = () => randomUUID().toUpperCase();
    const scans = create(RecordScansRequestSchema, {
      scans: [
        { id: upper(), linkId: upper() },
        { id: upper(), linkId: upper() },
      ],
    });
    expect(requestFieldProblems(RecordScansRequestSchema, scans as never)).toEqual([]);
    canonicalizeIds(RecordScansRequestSchema, scans as never);
    for (const scan of scans.scans) {
      expect(scan.id).toBe(scan.id.toLowerCase());
      expect(scan.linkId).toBe(scan.linkId.toLowerCase());
    }
    const totals = create(GetScanTotalsRequestSchema, { accountId: upper(), linkIds: [upper(), upper()] });
    canonicalizeIds(GetScanTotalsRequestSchema, totals as never);
    expect(
      [totals.accountId, ...totals.linkIds].every((value) => value === value.toLowerCase() && value.length === 36),
    ).toBe(true);
    // Optional ids, and fields that merely end in "id" without being ids, are left as they are.
    const qrCode = create(CreateQrCodeRequestSchema, {
      accountId: upper(),
      vanityDomainId: upper(),
      name: "Valid ID",
      vanitySlug: "Spring",
    });
    canonicalizeIds(CreateQrCodeRequestSchema, qrCode as never);
    expect(qrCode.accountId).toBe(qrCode.accountId.toLowerCase());
    expect(qrCode.vanityDomainId).toBe(qrCode.vanityDomainId!.toLowerCase());
    expect([qrCode.name, qrCode.vanitySlug, qrCode.workspaceId]).toEqual(["Valid ID", "Spring", undefined]);
  });
});

describe("field rules in schemas", () => {
  const even = (value: number) => (value % 2 === 0 ? undefined : { reason: "odd", description: "must be even" });
  const schema = z.object({
    count: z.number().superRefine(checkedBy(even)),
    slug: z
      .string()
      .transform(
        parsedBy((value: string) =>
          value.length > 2 ? { value: value.toLowerCase() } : { problem: { reason: "short", description: "is short" } },
        ),
      ),
  });

  it("report the rule's reason on the schema's field, and give what the rule parsed", () => {
    expect(validate(schema, { count: 2, slug: "ABC" })).toEqual({ count: 2, slug: "abc" });
    let error: unknown;
    try {
      validate(schema, { count: 3, slug: "A" });
    } catch (caught) {
      error = caught;
    }
    expect(
      errorInfoOf(error as never)?.fieldViolations.map(({ field, reason, description }) => ({
        field,
        reason,
        description,
      })),
    ).toEqual([
      { field: "count", reason: "odd", description: "must be even" },
      { field: "slug", reason: "short", description: "is short" },
    ]);
  });

  it("are bounded in an error like every problem list", () => {
    const problems = Array.from({ length: 50 }, (_, i) => ({
      field: `tags.${i}`,
      reason: "too_long",
      description: "is long",
    }));
    const info = errorInfoOf(invalidArgument(problems))!;
    expect(info.fieldViolations).toHaveLength(MAX_FIELD_PROBLEMS);
    expect(info.metadata.omitted_fields).toBe(String(50 - MAX_FIELD_PROBLEMS));
  });
});
