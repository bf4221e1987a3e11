import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { invalidArgument, type FieldProblem } from "../errors.js";
import { canonicalId, isUuid, textRuleProblem, type RuleProblem, type TextLines } from "../validation.js";

/**
 * Checks every request a service receives, before its handler runs, against the rules no field of ours
 * is exempt from, so an internal caller that skips the REST edge meets the same door:
 * - every string is storable text (see textProblem) of at most MAX_REQUEST_TEXT_LENGTH UTF-16 code units;
 *   fields named `description` or `content` may span lines;
 * - every id (a string field named `id` or ending in `_id` or `_ids`) is empty or a UUID;
 * - every float is finite, every timestamp lies in 0001-01-01..9999-12-31 (what Postgres and JavaScript
 *   dates both hold).
 * Integers need no check here: protobuf's own widths (int32, int64) are what our columns hold.
 * A request that breaks one is INVALID_ARGUMENT naming each field by its proto path; the handlers keep
 * the rules that belong to one field (lengths, formats, what must be set), declared as zod schemas.
 * A request that passes has every id in canonical (lower-case) form, so no handler lower-cases one:
 * a mixed-case id names the same row, cache entry and announcement as its lower-case spelling.
 */
export function checkRequestFields(): Interceptor {
  return (next) => async (req) => {
    if (!req.stream) {
      checkAndCanonicalize(req.method.input, req.message);
      return next(req);
    }
    const input = req.method.input;
    const messages = req.message;
    async function* checked() {
      for await (const message of messages) {
        checkAndCanonicalize(input, message);
        yield message;
      }
    }
    return next({ ...req, message: checked() });
  };
}

/**
 * Throws INVALID_ARGUMENT for a request with problems; otherwise makes its ids canonical in place (the
 * message is the server's own copy, decoded from the wire or, in process, from the serialized call).
 */
function checkAndCanonicalize(desc: DescMessage, message: unknown) {
  const problems = requestFieldProblems(desc, message as Record<string, unknown>);
  if (problems.length > 0) throw invalidArgument(problems);
  canonicalizeIds(desc, message as Record<string, unknown>);
}

/**
 * The longest string any field takes, in UTF-16 code units: above the largest field we have (a logo as a
 * data URI, 349,551), so that a field without a length rule of its own still has a bound.
 */
export const MAX_REQUEST_TEXT_LENGTH = 1_000_000;

/** Field names whose text may span lines; every other string is a single line. */
const MULTI_LINE_FIELDS: ReadonlySet<string> = new Set(["description", "content"]);

// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z in Unix seconds.
const MIN_TIMESTAMP_SECONDS = -62135596800n;
const MAX_TIMESTAMP_SECONDS = 253402300799n;

/** The problems {@link checkRequestFields} finds in one request message; exported for tests and tools. */
export function requestFieldProblems(desc: DescMessage, message: Record<string, unknown>, prefix = ""): FieldProblem[] {
  const problems: FieldProblem[] = [];
  collectProblems(desc, message, prefix, problems);
  return problems;
}

/**
 * Adds the message's problems to `problems`. Paths are written only for a problem found: a batch of
 * thousands of scans would otherwise build a path string, and an empty array, for every field it has.
 */
function collectProblems(
  desc: DescMessage,
  message: Record<string, unknown>,
  prefix: string,
  problems: FieldProblem[],
): void {
  const pathOf = (field: DescField) => (prefix ? `${prefix}.${field.name}` : field.name);
  for (const field of desc.fields) {
    const value = fieldValue(field, message);
    if (value === undefined) continue;
    switch (field.fieldKind) {
      case "scalar": {
        const problem = scalarProblem(field, field.scalar, value);
        if (problem) problems.push({ field: pathOf(field), ...problem });
        break;
      }
      case "list": {
        const elements = value as unknown[];
        for (let index = 0; index < elements.length; index++) {
          if (field.listKind === "scalar") {
            const problem = scalarProblem(field, field.scalar, elements[index]);
            if (problem) problems.push({ field: `${pathOf(field)}.${index}`, ...problem });
          } else if (field.listKind === "message") {
            collectMessageProblems(field.message, elements[index], `${pathOf(field)}.${index}`, problems);
          }
          if (problems.length > 100) break;
        }
        break;
      }
      case "map":
        for (const [key, element] of Object.entries(value as Record<string, unknown>)) {
          const elementPath = `${pathOf(field)}.${key.isWellFormed() ? key : "(key)"}`;
          if (field.mapKey === ScalarType.STRING) {
            const problem = scalarProblem(field, ScalarType.STRING, key);
            if (problem) problems.push({ field: `${pathOf(field)}.(key)`, ...problem });
          }
          if (field.mapKind === "scalar") {
            const problem = scalarProblem(field, field.scalar, element);
            if (problem) problems.push({ field: elementPath, ...problem });
          } else if (field.mapKind === "message") {
            collectMessageProblems(field.message, element, elementPath, problems);
          }
        }
        break;
      case "message":
        collectMessageProblems(field.message, value, pathOf(field), problems);
        break;
      case "enum":
        break;
    }
    // Enough to answer with: the error lists a bounded number anyway.
    if (problems.length > 100) break;
  }
}

function fieldValue(field: DescField, message: Record<string, unknown>): unknown {
  if (!field.oneof) return message[field.localName];
  const chosen = message[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
  return chosen?.case === field.localName ? chosen.value : undefined;
}

function collectMessageProblems(desc: DescMessage, value: unknown, path: string, problems: FieldProblem[]): void {
  if (desc.typeName === "google.protobuf.Timestamp") {
    const { seconds, nanos } = value as { seconds: bigint; nanos: number };
    const inRange =
      seconds >= MIN_TIMESTAMP_SECONDS && seconds <= MAX_TIMESTAMP_SECONDS && nanos >= 0 && nanos <= 999_999_999;
    if (!inRange)
      problems.push({ field: path, reason: "out_of_range", description: "must lie between 0001-01-01 and 9999-12-31" });
    return;
  }
  collectProblems(desc, value as Record<string, unknown>, path, problems);
}

/** Rewrites every id of a checked message (and of the messages it holds) in canonical form. */
export function canonicalizeIds(desc: DescMessage, message: Record<string, unknown>): void {
  for (const field of desc.fields) {
    const value = fieldValue(field, message);
    if (value === undefined) continue;
    if (field.fieldKind === "scalar" && field.scalar === ScalarType.STRING && isIdField(field)) {
      setFieldValue(field, message, canonicalId(value as string));
    } else if (
      field.fieldKind === "list" &&
      field.listKind === "scalar" &&
      field.scalar === ScalarType.STRING &&
      isIdField(field)
    ) {
      const ids = value as string[];
      for (const [index, id] of ids.entries()) ids[index] = canonicalId(id);
    } else if (field.fieldKind === "list" && field.listKind === "message") {
      for (const element of value as Record<string, unknown>[]) canonicalizeIds(field.message, element);
    } else if (field.fieldKind === "map" && field.mapKind === "message") {
      for (const element of Object.values(value as Record<string, Record<string, unknown>>))
        canonicalizeIds(field.message, element);
    } else if (field.fieldKind === "message" && field.message.typeName !== "google.protobuf.Timestamp") {
      canonicalizeIds(field.message, value as Record<string, unknown>);
    }
  }
}

function setFieldValue(field: DescField, message: Record<string, unknown>, value: unknown): void {
  if (field.oneof) (message[field.oneof.localName] as { value?: unknown }).value = value;
  else message[field.localName] = value;
}

function isIdField(field: DescField): boolean {
  return field.name === "id" || field.name.endsWith("_id") || field.name.endsWith("_ids");
}

function scalarProblem(field: DescField, scalar: ScalarType, value: unknown): RuleProblem | undefined {
  if (scalar === ScalarType.DOUBLE || scalar === ScalarType.FLOAT) {
    return Number.isFinite(value) ? undefined : { reason: "out_of_range", description: "must be a finite number" };
  }
  if (scalar !== ScalarType.STRING) return undefined;
  const text = value as string;
  if (text.length > MAX_REQUEST_TEXT_LENGTH)
    return { reason: "too_long", description: `must be at most ${MAX_REQUEST_TEXT_LENGTH} characters` };
  const lines: TextLines = MULTI_LINE_FIELDS.has(field.name) ? "multi" : "single";
  const problem = textRuleProblem(text, lines);
  if (problem) return problem;
  if (isIdField(field) && text !== "" && !isUuid(text))
    return { reason: "invalid_format", description: "must be a UUID" };
  return undefined;
}
