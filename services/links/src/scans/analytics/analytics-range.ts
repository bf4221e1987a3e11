import { z } from "zod";
import { AnalyticsInterval } from "@qrplatform/api/links";
import { parsedBy, protoFieldPath, type FieldProblem, type RuleProblem } from "@qrplatform/platform";

/** Days in a range when neither end is given: the last 30 days, today included. */
const DEFAULT_RANGE_DAYS = 30;
/** The longest range one request may ask for: a leap year. */
const MAX_RANGE_DAYS = 366;

/**
 * The longest range hourly buckets may cover: a month of 31 days, 744 buckets, as many as a chart can
 * show a point each for. They are counted from the raw scans, whose reading grows with the range.
 */
const MAX_HOURLY_RANGE_DAYS = 31;

const DAY_MS = 86_400_000;

/**
 * The calendar a range may lie in, both ends included. Scans are never older than the platform, and
 * YYYY-MM-DD cannot write a later year; outside it, a real date such as 0000-01-01 would still be
 * one the database cannot hold (it has no year 0).
 */
const FIRST_ANALYTICS_DATE = "2000-01-01";
const LAST_ANALYTICS_DATE = "9999-12-31";

/** A UTC calendar day "YYYY-MM-DD" as a day number since 1970-01-01, or undefined if it is no real date. */
function dayNumber(date: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined;
  const ms = Date.parse(`${date}T00:00:00Z`);
  // Date.parse rolls 2026-02-30 over to March; a real date prints back as itself.
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== date) return undefined;
  return ms / DAY_MS;
}

export const dayString = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** The days an analytics request covers, both ends included, as day numbers, and its series' buckets. */
export interface DayRange {
  first: number;
  last: number;
  /** Whether hourly buckets were asked for beside the daily ones. */
  hourly: boolean;
}

/** A day a range may start or end on, as a day number; empty is "not given". */
const analyticsDay = z.string().transform(
  parsedBy((value: string): { value: number | undefined } | { problem: RuleProblem } => {
    if (value === "") return { value: undefined };
    const day = dayNumber(value);
    if (day === undefined)
      return { problem: { reason: "invalid_date", description: "must be a calendar date written YYYY-MM-DD" } };
    if (value < FIRST_ANALYTICS_DATE || value > LAST_ANALYTICS_DATE) {
      return {
        problem: {
          reason: "out_of_range",
          description: `must be a day from ${FIRST_ANALYTICS_DATE} to ${LAST_ANALYTICS_DATE}`,
        },
      };
    }
    return { value: day };
  }),
);

/**
 * The range an analytics request (GetLinkAnalytics) asks for, in UTC days, given the time it is asked
 * at (`now`, the handler's clock, which the defaults depend on). `to_date` defaults to today and
 * `from_date` to 29 days before `to_date`; an empty string means "not given". Hourly buckets are
 * counted from raw scans, so they need a range of at most MAX_HOURLY_RANGE_DAYS days, which must
 * also start in the raw window ({@link hourlyWindowProblem}).
 */
export const analyticsRangeRequest = z
  .object({
    fromDate: analyticsDay,
    toDate: analyticsDay,
    interval: z.enum(AnalyticsInterval, { message: "must be day or hour" }),
    now: z.date(),
  })
  .transform(({ fromDate, toDate, interval, now }, ctx): DayRange => {
    const today = Math.floor(now.getTime() / DAY_MS);
    const last = toDate ?? today;
    const first = fromDate ?? last - (DEFAULT_RANGE_DAYS - 1);
    const hourly = interval === AnalyticsInterval.HOUR;
    const refuse = (reason: string, message: string) => {
      ctx.addIssue({ code: "custom", path: ["fromDate"], message, params: { reason } });
      return z.NEVER;
    };
    if (first > last)
      return refuse("invalid_range", `must not be after the last day of the range (${dayString(last)})`);
    if (last - first + 1 > MAX_RANGE_DAYS)
      return refuse("range_too_long", `the range may cover at most ${MAX_RANGE_DAYS} days`);
    if (hourly && last - first + 1 > MAX_HOURLY_RANGE_DAYS)
      return refuse("range_too_long", `with hourly buckets, the range may cover at most ${MAX_HOURLY_RANGE_DAYS} days`);
    return { first, last, hourly };
  });

/**
 * Why a valid range cannot have hourly buckets, given the first day they may start on (`hourlyFrom`,
 * "YYYY-MM-DD", from {@link hourlyAvailableFrom}): its first day is before it. Apart from the request
 * schema because that day is read from the database, which only a valid request of the caller's own
 * link should cost.
 */
export function hourlyWindowProblem(range: DayRange, hourlyFrom: string): FieldProblem | undefined {
  if (!range.hourly || dayString(range.first) >= hourlyFrom) return undefined;
  return {
    field: protoFieldPath(["fromDate"]),
    reason: "out_of_range",
    description: `with hourly buckets, must be a day from ${hourlyFrom}: older scans keep only their daily counts`,
  };
}

/**
 * The first day hourly buckets may be asked for, given the first day whose raw scans are kept: no
 * earlier than the first day of the analytics calendar (a fresh database keeps every day).
 */
export function hourlyAvailableFrom(firstKeptDay: string): string {
  return firstKeptDay < FIRST_ANALYTICS_DATE ? FIRST_ANALYTICS_DATE : firstKeptDay;
}
