import type { DescEnum } from "@bufbuild/protobuf";
import { InvalidArgumentError } from "commander";
import { enumFromToken, enumTokens } from "@qrplatform/platform";
import { parseDuration } from "./durations.js";

// Option parsers for commander: they run while the command line is parsed, so a bad value fails
// with commander's one-line error before any credential is read or any call is made.

/** Accepts the lowercase token of an enum value ("origin", "past_due") and returns its number. */
export function enumArg(schema: DescEnum, noun: string): (value: string) => number {
  return (value) => {
    const number = enumFromToken(schema, value);
    if (number === undefined)
      throw new InvalidArgumentError(`Unknown ${noun}; choose one of ${enumTokens(schema).join(", ")}.`);
    return number;
  };
}

/** Like {@link enumArg} for an option that may be repeated; collects the values. */
export function enumListArg(
  schema: DescEnum,
  noun: string,
): (value: string, previous: number[] | undefined) => number[] {
  const one = enumArg(schema, noun);
  return (value, previous) => [...(previous ?? []), one(value)];
}

/** A whole number of zero or more, as a bigint for int64 fields. */
export function countArg(value: string): bigint {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError("Expected a whole number of zero or more.");
  return BigInt(value.trim());
}

/** A page size between 1 and 100, the range the admin API accepts. */
export function pageSizeArg(value: string): number {
  const size = Number(countArg(value));
  if (size < 1 || size > 100) throw new InvalidArgumentError("Expected a number from 1 to 100.");
  return size;
}

/** A comma-separated list; blanks are dropped so "a, b," works. */
export function listArg(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/** A duration such as 30d, 12h, 90m or 3600s, in seconds. */
export function durationArg(value: string): number {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError(`${(error as Error).message}.`);
  }
}

/** Commander's option descriptions list an enum's tokens so --help shows every accepted value. */
export const tokensOf = (schema: DescEnum) => enumTokens(schema).join(", ");
