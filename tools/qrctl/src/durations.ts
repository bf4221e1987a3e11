/** Seconds per unit, largest first: the order units must appear in, as in "1d12h". */
const UNITS = [
  ["d", 86_400],
  ["h", 3_600],
  ["m", 60],
  ["s", 1],
] as const;

const PATTERN = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/**
 * Parses a duration such as 30d, 12h, 90m, 3600s or 1d12h into whole seconds. Throws with a message
 * fit for the command line when the text is not a positive duration.
 */
export function parseDuration(text: string): number {
  const match = PATTERN.exec(text.trim());
  if (!match || text.trim() === "") {
    throw new Error("Expected a number with a unit d, h, m or s, such as 30d, 12h, 90m, 3600s or 1d12h");
  }
  let seconds = 0;
  UNITS.forEach(([, perUnit], i) => {
    seconds += Number(match[i + 1] ?? 0) * perUnit;
  });
  if (!Number.isSafeInteger(seconds)) throw new Error("The duration is too long");
  if (seconds <= 0) throw new Error("The duration must be longer than zero");
  return seconds;
}
