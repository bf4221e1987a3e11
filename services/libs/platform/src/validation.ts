import { z } from "zod";
import { invalidArgument, type FieldProblem } from "./errors.js";

/** A protobuf-es field name in proto spelling: logoUrl -> logo_url. */
const protoFieldName = (segment: PropertyKey) => String(segment).replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * Field problems from a failed zod parse: dotted paths in proto spelling (what REST and gRPC clients
 * both see), zod's issue codes as reasons, and one problem per unknown key.
 */
export function fieldProblemsOf(error: z.ZodError): FieldProblem[] {
  return error.issues.flatMap((issue) => {
    const path = issue.path.map(protoFieldName);
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        field: [...path, key].join("."),
        reason: "unknown_field",
        description: "is not a field of this request",
      }));
    }
    return [{ field: path.join(".") || "(body)", reason: reasonOf(issue), description: issue.message }];
  });
}

/** The reason a zod issue is reported with: its own (`params.reason` of a custom check) or zod's code. */
export function reasonOf(issue: z.core.$ZodIssue): string {
  const own = issue.code === "custom" ? (issue.params as { reason?: unknown } | undefined)?.reason : undefined;
  return typeof own === "string" ? own : issue.code;
}

/** Parses input with a zod schema or throws INVALID_ARGUMENT naming every invalid field. */
export function validate<Schema extends z.ZodType>(schema: Schema, input: unknown): z.infer<Schema> {
  const result = schema.safeParse(input);
  if (!result.success) throw invalidArgument(fieldProblemsOf(result.error));
  return result.data;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a string is a UUID; ids that are not cannot name anything, so callers answer NOT_FOUND early. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/** A string field that must be a UUID, for request schemas. */
export const uuidSchema = z.string().refine(isUuid, "must be a UUID");

/**
 * Whether a text field may span lines. Multi-line fields (descriptions) also take TAB, LF and CR;
 * single-line fields (names, tags, ids, everything else) take no control character at all.
 */
export type TextLines = "single" | "multi";

/** The reason every door gives for text it cannot store and read back as sent. */
export const INVALID_CHARACTERS = "invalid_characters";

// Control characters (C0, DEL and C1): NUL cannot be stored by Postgres at all, and none can be shown.
const SINGLE_LINE_CONTROLS = /\p{Cc}/u;
const MULTI_LINE_CONTROLS = /[^\P{Cc}\t\n\r]/u;

/**
 * Why a string cannot be stored and read back byte-for-byte, or undefined when it can: a control
 * character (NUL and the other C0 controls, DEL, the C1 controls; TAB, LF and CR are text in multi-line fields), a
 * byte-order mark U+FEFF (the embedded database's UTF-8 decoder drops one that leads a value, and
 * String.prototype.trim strips it, so it would not survive either way), or a lone surrogate (a string
 * that is not well-formed UTF-16 has no UTF-8 form and would be stored as U+FFFD).
 */
export function textProblem(value: string, lines: TextLines = "single"): string | undefined {
  if (!value.isWellFormed()) return "must be well-formed Unicode (no lone surrogates)";
  if ((lines === "multi" ? MULTI_LINE_CONTROLS : SINGLE_LINE_CONTROLS).test(value)) {
    return lines === "multi" ? "must not contain control characters other than tab and line breaks" : "must not contain control characters such as NUL or line breaks";
  }
  if (value.includes("\ufeff")) return "must not contain a byte-order mark (U+FEFF)";
  return undefined;
}

/**
 * A string field that holds text, for request schemas: refuses what {@link textProblem} refuses with
 * the reason `invalid_characters`. Checks chained after it (trim, lengths) see only storable text.
 */
export function textSchema(lines: TextLines = "single") {
  return z.string().superRefine((value, ctx) => {
    const problem = textProblem(value, lines);
    if (problem) ctx.addIssue({ code: "custom", message: problem, params: { reason: INVALID_CHARACTERS } });
  });
}
