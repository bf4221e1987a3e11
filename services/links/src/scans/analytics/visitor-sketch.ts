/**
 * HyperLogLog sketches of a link's visitors: 2^12 one-byte registers (4 KiB), a standard error of
 * 1.04 / sqrt(4096) = 1.6%. Postgres fills them (see `registersSql`) from a 64-bit hash of each visitor
 * key: the top 12 bits choose a register, which keeps the highest rank (position of the first 1 bit
 * in the other 52 bits) seen. Sketches of days merge by taking each register's maximum, so a range of
 * 366 days reads 366 sketches however many visitors they saw. The estimate is Ertl's improved raw
 * estimator ("New cardinality estimation algorithms for HyperLogLog sketches", 2017), which is
 * unbiased from one visitor to billions without HyperLogLog++'s empirical tables.
 */
export const SKETCH_PRECISION = 12;
export const SKETCH_REGISTERS = 1 << SKETCH_PRECISION;
/** Bits of the hash left after the register index: ranks run from 1 to RANK_BITS + 1. */
const RANK_BITS = 64 - SKETCH_PRECISION;

/**
 * The SQL (over a relation with a `visitor` column, the visitor key's `hashtextextended(key, 0)`,
 * Postgres's 64-bit hash of text, on PGlite too) that gives each visitor's register.
 */
export const REGISTER_SQL = `((visitor >> ${RANK_BITS}) & ${SKETCH_REGISTERS - 1})::int`;
/**
 * The SQL giving the other RANK_BITS bits of a visitor's hash, as a bigint below 2^52 (so exact as a
 * JS number). The lowest of them in a register has its highest rank, so Postgres only keeps a
 * minimum per register, an integer aggregate, and {@link rankOf} turns it into the rank.
 */
export const RANK_BITS_SQL = `(visitor & ${2 ** RANK_BITS - 1})`;

/** The rank of a visitor whose hash ends in `bits` (below 2^52): one plus the leading zeros of those 52 bits. */
export function rankOf(bits: number): number {
  const high = Math.floor(bits / 2 ** 32);
  const length = high > 0 ? 64 - Math.clz32(high) : 32 - Math.clz32(bits >>> 0);
  return RANK_BITS + 1 - length;
}

/** An empty sketch. */
export function emptySketch(): Uint8Array {
  return new Uint8Array(SKETCH_REGISTERS);
}

/** Raises `into`'s registers to `other`'s where higher: `into` then counts both sets of visitors. */
export function mergeSketch(into: Uint8Array, other: Uint8Array): void {
  for (let i = 0; i < SKETCH_REGISTERS; i++) if (other[i]! > into[i]!) into[i] = other[i]!;
}

/** Notes one visitor by its register and rank. */
export function addToSketch(into: Uint8Array, register: number, rank: number): void {
  if (rank > into[register]!) into[register] = rank;
}

/** The estimated number of distinct visitors a sketch has seen. */
export function estimateVisitors(registers: Uint8Array): number {
  const m = SKETCH_REGISTERS;
  const counts = new Array<number>(RANK_BITS + 2).fill(0);
  for (const value of registers) counts[value]!++;
  let z = m * tau(1 - counts[RANK_BITS + 1]! / m);
  for (let k = RANK_BITS; k >= 1; k--) z = 0.5 * (z + counts[k]!);
  z += m * sigma(counts[0]! / m);
  return Math.round(m ** 2 / (2 * Math.LN2) / z);
}

function sigma(x: number): number {
  if (x === 1) return Infinity;
  let y = 1;
  let z = x;
  for (;;) {
    x *= x;
    const previous = z;
    z += x * y;
    y += y;
    if (z === previous) return z;
  }
}

function tau(x: number): number {
  if (x === 0 || x === 1) return 0;
  let y = 1;
  let z = 1 - x;
  for (;;) {
    x = Math.sqrt(x);
    const previous = z;
    y *= 0.5;
    z -= (1 - x) ** 2 * y;
    if (z === previous) return z / 3;
  }
}
