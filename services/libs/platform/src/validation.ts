import { z } from "zod";
import { invalidArgument, type FieldProblem } from "./errors.js";
import { protoFieldPath } from "./field-paths.js";

/**
 * How the fields of a parsed value are named in its problems: `proto` for a protobuf-es message (a
 * service's request: local names become proto paths), `as-sent` for JSON whose keys are already the
 * caller's (the REST edge's request shapes, written in the contract's names).
 */
export type FieldPathSpelling = "proto" | "as-sent";

/**
 * Field problems from a failed zod parse: dotted paths in the caller's spelling, the check's own reason
 * (see {@link reasonOf}) and one `unknown_field` problem per key the schema does not have.
 */
export function fieldProblemsOf(error: z.ZodError, spelling: FieldPathSpelling = "proto"): FieldProblem[] {
  const pathOf =
    spelling === "proto" ? protoFieldPath : (segments: readonly PropertyKey[]) => segments.map(String).join(".");
  return error.issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        field: pathOf([...issue.path, key]),
        reason: "unknown_field",
        description: "is not a field of this request; read-only and unknown fields cannot be sent",
      }));
    }
    return [{ field: pathOf(issue.path) || "(body)", reason: reasonOf(issue), description: issue.message }];
  });
}

/** The reason a zod issue is reported with: its own (`params.reason` of a custom check) or zod's code. */
export function reasonOf(issue: z.core.$ZodIssue): string {
  const own = issue.code === "custom" ? (issue.params as { reason?: unknown } | undefined)?.reason : undefined;
  return typeof own === "string" ? own : issue.code;
}

/**
 * Parses a service's request with its zod schema, or throws INVALID_ARGUMENT naming every invalid field
 * by its proto path. This is how every service declares the checks of an RPC: one schema per request.
 */
export function validate<Schema extends z.ZodType>(schema: Schema, input: unknown): z.infer<Schema> {
  const result = schema.safeParse(input);
  if (!result.success) throw invalidArgument(fieldProblemsOf(result.error));
  return result.data;
}

/** What a field rule answers for a value it refuses: a stable reason and an explanation. */
export type RuleProblem = Pick<FieldProblem, "reason" | "description">;

/**
 * A zod refinement from a pure rule that says why a value is refused (one problem, several, or none),
 * so rules that are also used on their own (and tested so) are declared in a request schema like any
 * other check: `destinationUrl: z.string().superRefine(checkedBy(destinationUrlProblem))`. The problem
 * is reported on the schema's field, with the rule's reason.
 */
export function checkedBy<T>(rule: (value: T) => RuleProblem | readonly RuleProblem[] | undefined) {
  return (value: T, ctx: z.RefinementCtx) => {
    const found = rule(value);
    const problems: readonly RuleProblem[] =
      found === undefined ? [] : Array.isArray(found) ? found : [found as RuleProblem];
    for (const { reason, description } of problems)
      ctx.addIssue({ code: "custom", message: description, params: { reason } });
  };
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a string is a UUID; ids that are not cannot name anything, so callers answer NOT_FOUND early. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/**
 * An id in the one form it is compared, stored and announced in: lower case. UUIDs are accepted in any
 * case (RFC 9562 says to), so `7B0E…` and `7b0e…` must name the same row, cache entry and event.
 */
export function canonicalId(id: string): string {
  return id.toLowerCase();
}

/**
 * A string field that must be a UUID, for request schemas: refused with `invalid_format` otherwise,
 * and given in canonical (lower-case) form. Services need not use it for ids: their requests' ids are
 * checked and made canonical by the request-check interceptor before any handler runs.
 */
export const uuidSchema = z
  .string()
  .refine(isUuid, { message: "must be a UUID", params: { reason: "invalid_format" } })
  .transform(canonicalId);

/** An id a request must give: empty (proto3's "not set") is `required`, anything else as {@link uuidSchema}. */
export const requiredUuidSchema = z
  .string()
  .refine((value) => value !== "", { message: "is required", params: { reason: "required" } })
  .pipe(uuidSchema);

/**
 * A field rule made into a zod transform: `parse` gives the value's stored form, or `{ problem }` when
 * it has none (the problem is reported on the schema's field, with the rule's reason).
 */
export function parsedBy<T, Parsed>(parse: (value: T) => { value: Parsed } | { problem: RuleProblem }) {
  return (value: T, ctx: z.RefinementCtx): Parsed => {
    const parsed = parse(value);
    if ("value" in parsed) return parsed.value;
    ctx.addIssue({ code: "custom", message: parsed.problem.description, params: { reason: parsed.problem.reason } });
    return z.NEVER;
  };
}

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
    return lines === "multi"
      ? "must not contain control characters other than tab and line breaks"
      : "must not contain control characters such as NUL or line breaks";
  }
  if (value.includes("\ufeff")) return "must not contain a byte-order mark (U+FEFF)";
  return undefined;
}

/**
 * A string field that holds text, for request schemas: refuses what {@link textProblem} refuses with
 * the reason `invalid_characters`. Checks chained after it (trim, lengths) see only storable text.
 */
export function textSchema(lines: TextLines = "single") {
  return z.string().superRefine(checkedBy((value: string) => textRuleProblem(value, lines)));
}

/** {@link textProblem} as a field rule: the reason is always `invalid_characters`. */
export function textRuleProblem(value: string, lines: TextLines = "single"): RuleProblem | undefined {
  const problem = textProblem(value, lines);
  return problem === undefined ? undefined : { reason: INVALID_CHARACTERS, description: problem };
}
