import type { Request } from "express";
import { z } from "zod";
import { uuidSchema } from "@qrplatform/platform";
import { parseInput } from "../http/input.js";

/** One schema a parameter name, made once: a zod object compiles itself on first use. */
const paramSchemas = new Map<string, z.ZodType<Record<string, string>>>();

/**
 * A path parameter that must be a UUID, in canonical form. A malformed id is a client error (400),
 * not a missing resource: it can never name anything, and saying so helps more than a 404.
 */
export function uuidParam(req: Request, name: string): string {
  let schema = paramSchemas.get(name);
  if (!schema) {
    schema = z.object({ [name]: uuidSchema });
    paramSchemas.set(name, schema);
  }
  return parseInput(schema, { [name]: req.params[name] })[name]!;
}
