// IANA time zones through Intl, and the local wall-clock time of an instant in one, cached so that a
// redirect deciding twenty scheduled rules formats the time once per zone and minute, not per rule.

const formatters = new Map<string, Intl.DateTimeFormat | null>();

// One formatter per zone (building one costs tens of microseconds); null remembers a name Intl refuses.
function formatterOf(zone: string): Intl.DateTimeFormat | null {
  let formatter = formatters.get(zone);
  if (formatter === undefined) {
    try {
      formatter = new Intl.DateTimeFormat("en-US", {
        timeZone: zone,
        hourCycle: "h23",
        weekday: "short",
        hour: "2-digit",
        minute: "2-digit",
      });
    } catch {
      formatter = null;
    }
    // Names come from callers; remembering every refused spelling would let them grow the map.
    if (formatter !== null || formatters.size < 1000) formatters.set(zone, formatter);
  }
  return formatter;
}

const CANONICAL_ZONES = new Set(Intl.supportedValuesOf("timeZone"));

/**
 * Whether a name is an IANA time zone the runtime knows: a canonical name ("Europe/Berlin") or a
 * link to one ("Asia/Calcutta", "US/Eastern", "UTC"), each part starting with a capital as IANA
 * writes them (Intl would also take "europe/berlin"). Offsets ("+01:00") are not zones.
 */
export function isTimeZone(name: string): boolean {
  if (CANONICAL_ZONES.has(name)) return true;
  return /^[A-Z][A-Za-z0-9_+-]*(?:\/[A-Z][A-Za-z0-9_+-]*)*$/.test(name) && formatterOf(name) !== null;
}

/** The local wall-clock time of an instant in a zone. */
export interface LocalClock {
  /** The day of the week as an index: 0 for Monday to 6 for Sunday. */
  day: number;
  /** The minute of the day, 0 to 1439. */
  minute: number;
}

const DAY_OF: Record<string, number> = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 };

interface CachedClock extends LocalClock {
  /** The UTC minute it holds for (every zone's offset is a whole number of minutes since 1972). */
  utcMinute: number;
}

const clocks = new Map<string, CachedClock>();

/** The local time of `at` (Unix milliseconds) in `zone`, which must be one {@link isTimeZone} accepts. */
export function localClock(zone: string, at: number): LocalClock {
  const utcMinute = Math.floor(at / 60_000);
  const cached = clocks.get(zone);
  if (cached !== undefined && cached.utcMinute === utcMinute) return cached;
  const formatter = formatterOf(zone);
  if (formatter === null) throw new RangeError(`unknown time zone ${zone}`);
  let day = 0;
  let hour = 0;
  let minute = 0;
  for (const part of formatter.formatToParts(at)) {
    if (part.type === "weekday") day = DAY_OF[part.value] ?? day;
    else if (part.type === "hour") hour = Number(part.value);
    else if (part.type === "minute") minute = Number(part.value);
  }
  const clock = { day, minute: hour * 60 + minute, utcMinute };
  if (cached !== undefined || clocks.size < 1000) clocks.set(zone, clock);
  return clock;
}
