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
    return [{ field: path.join(".") || "(body)", reason: issue.code, description: issue.message }];
  });
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
