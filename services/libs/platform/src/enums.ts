import type { DescEnum } from "@bufbuild/protobuf";

/**
 * The public token of a protobuf enum value: its name without the enum prefix, in lower snake case
 * (SUBSCRIPTION_TIER_ORIGIN -> "origin", MODULE_STYLE_EXTRA_ROUNDED -> "extra_rounded"). One rule for
 * REST, the CLI and database columns, so a value is spelled the same everywhere.
 */
export function enumToken(schema: DescEnum, value: number): string {
  const found = schema.values.find((v) => v.number === value);
  if (!found) throw new RangeError(`${value} is not a value of ${schema.typeName}`);
  return found.localName.toLowerCase();
}

/** The enum value for a public token, or undefined for an unknown token or the UNSPECIFIED value. */
export function enumFromToken(schema: DescEnum, token: string): number | undefined {
  const found = schema.values.find((v) => v.number !== 0 && v.localName.toLowerCase() === token);
  return found?.number;
}

/** Every public token of an enum, UNSPECIFIED excluded, in declaration order. */
export function enumTokens(schema: DescEnum): string[] {
  return schema.values.filter((v) => v.number !== 0).map((v) => v.localName.toLowerCase());
}
