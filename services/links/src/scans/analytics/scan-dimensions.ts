import { sql } from "kysely";
import { NO_VARIANT } from "../scan-columns.js";
import type { ScanDeltasTable } from "./scans.table.js";

/**
 * The dimensions analytics breaks scans down by, and the scan column each one reads. `rule` is the
 * routing rule that decided a scan ({@link ruleValue}); scans no rule decided get no `rule` value, so
 * links without routing add nothing to the rollups for it, and readers count them as the difference.
 */
export const DIMENSIONS = {
  country: "country",
  device: "device_type",
  os: "os",
  browser: "browser",
  referrer: "referrer_host",
  rule: "rule",
} as const satisfies Record<string, keyof ScanDeltasTable>;
export type Dimension = keyof typeof DIMENSIONS;

/**
 * The one-letter code of each dimension, which starts each of its values in links.scan_values ("cDE"
 * is the country DE); a link-day's row in links.scan_link_days holds the values' codes there.
 */
export const DIMENSION_CODES = {
  country: "c",
  device: "d",
  os: "o",
  browser: "b",
  referrer: "r",
  rule: "u",
} as const satisfies Record<Dimension, string>;
const DIMENSION_OF_CODE = new Map<string, Dimension>(
  Object.entries(DIMENSION_CODES).map(([dimension, code]) => [code, dimension as Dimension]),
);

/**
 * A scan_deltas row spread over the breakdowns: one (dimension, value, coded value) per dimension,
 * for `CROSS JOIN LATERAL`; the coded value is the value as links.scan_values spells it.
 */
export const DELTA_BY_DIMENSION = sql`(VALUES ${sql.join(
  Object.entries(DIMENSIONS).map(
    ([dimension, column]) =>
      sql`(${sql.lit(dimension)}, ${sql.ref(`deltas.${column}`)}, ${sql.lit(DIMENSION_CODES[dimension as Dimension])} || ${sql.ref(`deltas.${column}`)})`,
  ),
)}) AS breakdown (dimension, value, dimension_value)`;

/** The breakdowns a delta counts in: every one but an empty `rule` (no rule decided the scans). */
export const COUNTED_BREAKDOWN = sql`(breakdown.value <> '' OR breakdown.dimension <> 'rule')`;

/**
 * The `rule` breakdown's value of a scan: the rule's id, "<rule id>/<variant>" for a split rule's
 * variant (so one row per variant, and the rule's scans are their sum), "" when no rule decided.
 */
export function ruleValue(ruleId: string, variant: number): string {
  if (ruleId === "") return "";
  return variant === NO_VARIANT ? ruleId : `${ruleId}/${variant}`;
}

/** The dimension of a value as links.scan_values spells it; only the folds write it, from DIMENSION_CODES. */
export function dimensionOf(dimensionValue: string): Dimension {
  const dimension = DIMENSION_OF_CODE.get(dimensionValue.slice(0, 1));
  if (dimension === undefined) throw new Error(`links.scan_values holds "${dimensionValue}", of no known dimension`);
  return dimension;
}
