// RFC 3339 instants and HH:MM clock times as routing writes them.

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * The Unix milliseconds of an RFC 3339 date-time with an offset ("2026-12-01T09:00:00Z",
 * "2026-12-01T10:00:00.5+01:00"), or undefined when the text is not one or names no real moment
 * (February 30th, hour 24, a leap second, an offset past ±23:59). Digits past milliseconds are dropped.
 */
export function parseInstant(text: string): number | undefined {
  const match = RFC3339.exec(text);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return undefined;
  const offsetHours = match[9] === undefined ? 0 : Number(match[9]);
  const offsetMinutes = match[10] === undefined ? 0 : Number(match[10]);
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const sign = match[8]!.startsWith("-") ? -1 : 1;
  const millis = match[7] === undefined ? 0 : Math.floor(Number(`0${match[7]}`) * 1000);
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  // Date.UTC maps years 0–99 to 1900–1999; setUTCFullYear puts them back where they were written.
  const date = new Date(utc);
  date.setUTCFullYear(year);
  return date.getTime() - sign * (offsetHours * 60 + offsetMinutes) * 60_000;
}

const CLOCK = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** The minute of the day of an "HH:MM" time (00:00 to 23:59), or undefined when the text is not one. */
export function parseClock(text: string): number | undefined {
  const match = CLOCK.exec(text);
  return match === null ? undefined : Number(match[1]) * 60 + Number(match[2]);
}
