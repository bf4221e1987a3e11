import { isUtf8 } from "node:buffer";
import express, { type Request, type RequestHandler } from "express";
import type { z } from "zod";
import { fieldProblemsOf, type FieldProblem } from "@qrplatform/platform";
import { ApiError } from "./api-error.js";

/** Fields a client may see but not send, with why: `read_only` or `creation_only`. */
export type FixedFields = Readonly<Record<string, "read_only" | "creation_only">>;

const FIXED_MESSAGES = {
  read_only: "is read-only and cannot be sent",
  creation_only: "is set when the resource is created and cannot be changed",
} as const;

/**
 * Parses a value with a zod schema, or throws 400 `validation_error` naming every invalid field.
 * Fields listed in `fixed` are refused with their own reason, so a client learns why it cannot send them.
 * `check` adds the problems of a pure check the schema leaves to it (a QR code's routing fields, which
 * the schema takes as they are), so that every problem of the request is reported at once.
 */
export function parseInput<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  fixed: FixedFields = {},
  check?: (value: Record<string, unknown>) => FieldProblem[],
): z.infer<Schema> {
  const problems: FieldProblem[] = [];
  let rest = value;
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const entries = Object.entries(value);
    for (const [key] of entries) {
      const reason = Object.hasOwn(fixed, key) ? fixed[key] : undefined;
      if (reason) problems.push({ field: key, reason, description: FIXED_MESSAGES[reason] });
    }
    rest = Object.fromEntries(entries.filter(([key]) => !Object.hasOwn(fixed, key)));
  }
  const result = schema.safeParse(rest);
  // concat, not push(...): spreading a hundred thousand problems as arguments overflows the stack.
  // The request shapes use the contract's names, so paths are written as sent.
  let all = result.success ? problems : problems.concat(fieldProblemsOf(result.error, "as-sent"));
  if (check && rest !== null && typeof rest === "object" && !Array.isArray(rest))
    all = all.concat(check(rest as Record<string, unknown>));
  if (all.length > 0) throw ApiError.validation(all);
  return result.data as z.infer<Schema>;
}

/** The JSON body of a POST or PATCH; a body of any other content type is 415. */
export function jsonBody(req: Request): unknown {
  const isJson = req.is("application/json");
  // No body at all reads as an empty object, so the problems name the missing fields.
  if (isJson === null) return {};
  if (!isJson) {
    throw new ApiError(
      415,
      "unsupported_media_type",
      "Send the request body as JSON with `Content-Type: application/json`.",
    );
  }
  return req.body;
}

/**
 * How deeply arrays and objects may nest in a request body. Our deepest request (a bulk create's item
 * design) nests 5 levels; a bound well above it keeps every later walk of the parsed body (the
 * Idempotency-Key fingerprint, zod, the services' checks) far from the stack's limit.
 */
export const MAX_JSON_DEPTH = 64;

const OPEN_BRACKETS = new Set([0x5b, 0x7b]); // [ {
const CLOSE_BRACKETS = new Set([0x5d, 0x7d]); // ] }

/**
 * Whether the JSON text nests arrays and objects deeper than `max`, found by one loop over the bytes
 * (brackets inside strings do not count), so nothing recursive ever sees a body that is too deep.
 */
export function nestsDeeperThan(body: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i]!;
    if (inString) {
      if (byte === 0x5c)
        i++; // a backslash escapes the next byte, which may be a quote
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) {
      inString = true;
    } else if (OPEN_BRACKETS.has(byte)) {
      if (++depth > max) return true;
    } else if (CLOSE_BRACKETS.has(byte)) {
      depth--;
    }
  }
  return false;
}

/**
 * Checks a JSON body's bytes before they are parsed: UTF-8 that does not decode (a stray continuation
 * byte, an overlong form, a surrogate) is refused rather than read as U+FFFD and stored, and a body
 * nested deeper than MAX_JSON_DEPTH is refused before anything walks it.
 */
function checkJsonBytes(_req: unknown, _res: unknown, body: Buffer, encoding: string): void {
  if (encoding.toLowerCase() === "utf-8" && !isUtf8(body)) {
    throw new ApiError(400, "invalid_utf8", "The request body is not valid UTF-8; send JSON text encoded as UTF-8.");
  }
  if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
    throw new ApiError(
      400,
      "json_too_deep",
      `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`,
      { max_depth: MAX_JSON_DEPTH },
    );
  }
}

/**
 * express's JSON parser, which also reads bodies sent with `Content-Encoding` gzip, deflate, br or zstd
 * and applies `limit` to what they inflate to (a compression bomb is 413 like any large body). A body
 * that does not decode as its encoding says is reported by the parser without a `type`: it becomes
 * 400 `invalid_json` here, since the body cannot be read as JSON. The decoded bytes are checked
 * (checkJsonBytes) before they are parsed.
 */
export function jsonBodyParser(limit: number): RequestHandler {
  const parse = express.json({ limit, type: "application/json", verify: checkJsonBytes });
  return (req, res, next) =>
    parse(req, res, (error?: unknown) => {
      // The parser hands on what checkJsonBytes threw with the body attached; the answer needs neither.
      if (error instanceof ApiError) return next(new ApiError(error.status, error.code, error.message, error.details));
      const undecodable =
        error instanceof Error &&
        (error as { type?: unknown }).type === undefined &&
        (error as { status?: unknown }).status === 400;
      next(
        undecodable
          ? new ApiError(400, "invalid_json", "The request body does not decode as its Content-Encoding says.")
          : error,
      );
    });
}
