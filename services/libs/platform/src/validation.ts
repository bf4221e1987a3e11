import type { z } from "zod";
import { invalidArgument, type FieldProblem } from "./errors.js";

/** Field problems from a failed zod parse, with dotted field paths and zod's issue codes as reasons. */
export function fieldProblemsOf(error: z.ZodError): FieldProblem[] {
  return error.issues.map((issue) => ({
    field: issue.path.map(String).join(".") || "(body)",
    reason: issue.code,
    description: issue.message,
  }));
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
