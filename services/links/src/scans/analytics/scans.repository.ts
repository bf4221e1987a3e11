import { sql, type Kysely } from "kysely";
import type { LinksTables } from "../../tables.js";
import { DIMENSION_CODES, DIMENSIONS, dimensionOf, type Dimension } from "./scan-dimensions.js";
import { firstKeyAt, firstScanIdAt } from "./scan-keys.js";
import { decodeDayCounts, decodeDaySketch, emptyDayCounts, encodeDayCounts, encodeDaySketch } from "./day-encoding.js";
import { RANK_BITS_SQL, rankOf, REGISTER_SQL } from "./visitor-sketch.js";

type Db = Kysely<LinksTables>;

/** All-time scans of the account's links among `linkIds`, folded or not; links without scans are absent. */
export async function scanTotals(db: Db, accountId: string, linkIds: string[]): Promise<Map<string, number>> {
  if (linkIds.length === 0) return new Map();
  // One statement, one snapshot: a fold committing meanwhile moves scans from one side to the other.
  const { rows } = await sql<{ link_id: string; scans: number }>`
    SELECT link_id, sum(scans)::bigint AS scans FROM (
      SELECT link_id, scans FROM links.scan_totals WHERE account_id = ${accountId} AND link_id = ANY(${linkIds}::uuid[])
      UNION ALL
      SELECT link_id, scans FROM links.scan_deltas WHERE account_id = ${accountId} AND link_id = ANY(${linkIds}::uuid[])
    ) AS all_scans
    GROUP BY link_id`.execute(db);
  return new Map(rows.map((row) => [row.link_id, Number(row.scans)]));
}

/** Whether the link is the account's, deleted or not: its scans stay readable until the code is gone. */
export async function isAccountLink(db: Db, accountId: string, linkId: string): Promise<boolean> {
  const row = await db
    .selectFrom("links")
    .select("id")
    .where("id", "=", linkId)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * A link's scans over the days from `from` to `to` (inclusive, UTC), read from the rollups and the
 * deltas not folded yet. A day the partition manager has not counted yet (today, and until about an
 * hour after midnight the day before) takes its distinct visitors from its raw scans instead: writers
 * leave them to the day's close.
 */
export interface ScanSummary {
  daily: { day: string; scans: number; uniqueScans: number }[];
  breakdowns: { dimension: string; value: string; scans: number }[];
}

export async function summarizeScans(db: Db, linkId: string, from: string, to: string): Promise<ScanSummary> {
  const [{ rows }, uncounted] = await Promise.all([
    summaryRows(db, linkId, from, to),
    uncountedDayVisitors(db, linkId, from, to),
  ]);
  return summaryOf(db, rows, uncounted);
}

/** The rollup rows and unfolded deltas of a link's range, in one statement (one snapshot: a fold committing meanwhile moves scans from the deltas to the rows). */
function summaryRows(db: Db, linkId: string, from: string, to: string) {
  return sql<
    {
      day: string;
      counts: Uint8Array | null;
      scans: string | number | null;
      visitors: string | number | null;
    } & Record<(typeof DIMENSIONS)[Dimension], string | null>
  >`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, counts, NULL::bigint AS scans, NULL::bigint AS visitors,
      NULL::text AS country, NULL::text AS device_type, NULL::text AS os, NULL::text AS browser,
      NULL::text AS referrer_host, NULL::text AS rule
    FROM links.scan_link_days WHERE link_id = ${linkId} AND day BETWEEN ${from} AND ${to}
    UNION ALL
    SELECT to_char(day, 'YYYY-MM-DD'), NULL, sum(scans)::bigint, sum(visitors)::bigint,
      country, device_type, os, browser, referrer_host, rule
    FROM links.scan_deltas WHERE link_id = ${linkId} AND day BETWEEN ${from} AND ${to}
    GROUP BY day, country, device_type, os, browser, referrer_host, rule`.execute(db);
}

/**
 * The exact distinct visitors of each day of a link's range whose visitors the partition manager has
 * not counted yet (from links.scan_window.recounted_until), counted from its raw scans through their
 * index, and from the visitor-days a writer of the version before 20270310T1100_raw_scans may still add
 * during an upgrade.
 */
async function uncountedDayVisitors(db: Db, linkId: string, from: string, to: string): Promise<Map<string, number>> {
  const { rows: window } = await sql<{ counted: string | null }>`
    SELECT to_char(recounted_until, 'YYYY-MM-DD') AS counted FROM links.scan_window`.execute(db);
  const countedUntil = window[0]?.counted ?? null;
  const first = countedUntil !== null && countedUntil > from ? countedUntil : from;
  if (countedUntil === null || first > to) return new Map();
  const { rows } = await sql<{ day: string; visitors: number }>`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, count(DISTINCT visitor)::int AS visitors
    FROM ${visitorsOfDays(linkId, first, to)}
    GROUP BY day`.execute(db);
  return new Map(rows.map((row) => [row.day, row.visitors]));
}

async function summaryOf(
  db: Db,
  rows: Awaited<ReturnType<typeof summaryRows>>["rows"],
  uncountedDays: Map<string, number>,
): Promise<ScanSummary> {
  const daily = new Map<string, { day: string; scans: number; uniqueScans: number }>();
  const byCode = new Map<number, number>();
  const byValue = new Map<string, number>();
  const add = <K>(into: Map<K, number>, key: K, scans: number) => into.set(key, (into.get(key) ?? 0) + scans);
  for (const row of rows) {
    let scans: number;
    let uniqueScans: number;
    if (row.counts !== null) {
      const counts = decodeDayCounts(row.counts);
      // A row a sketch made before any fold counts nothing: its day is not one with scans.
      if (counts.scans === 0 && counts.uniqueScans === 0 && counts.values.size === 0) continue;
      ({ scans, uniqueScans } = counts);
      for (const [code, valueScans] of counts.values) add(byCode, code, valueScans);
    } else {
      scans = Number(row.scans);
      uniqueScans = Number(row.visitors);
      for (const [dimension, column] of Object.entries(DIMENSIONS)) {
        const value = row[column]!;
        if (value === "" && dimension === "rule") continue;
        add(byValue, DIMENSION_CODES[dimension as Dimension] + value, scans);
      }
    }
    const day = daily.get(row.day) ?? { day: row.day, scans: 0, uniqueScans: 0 };
    day.scans += scans;
    day.uniqueScans += uniqueScans;
    daily.set(row.day, day);
  }
  for (const [day, visitors] of uncountedDays) {
    const counted = daily.get(day);
    if (counted) counted.uniqueScans = visitors;
  }
  const names = await valuesOfCodes(db, [...byCode.keys()]);
  for (const [code, scans] of byCode) add(byValue, names.get(code)!, scans);
  return {
    daily: [...daily.values()].sort((a, b) => (a.day < b.day ? -1 : 1)),
    breakdowns: [...byValue]
      .filter(([, scans]) => scans !== 0)
      .map(([dimensionValue, scans]) => ({
        dimension: dimensionOf(dimensionValue),
        value: dimensionValue.slice(1),
        scans,
      })),
  };
}

/**
 * The values links.scan_values has given codes, per database handle: a code never changes once given
 * (the folder only adds codes), so each is read once per process, and a summary of a link already
 * read costs one statement.
 */
const knownValues = new WeakMap<Db, Map<number, string>>();

/** The values links.scan_values gives `codes`, spelled as it spells them; throws on a code it lacks. */
async function valuesOfCodes(db: Db, codes: number[]): Promise<Map<number, string>> {
  let known = knownValues.get(db);
  if (!known) {
    known = new Map();
    knownValues.set(db, known);
  }
  const unknown = codes.filter((code) => !known.has(code));
  if (unknown.length > 0) {
    const { rows } = await sql<{ code: string | number; dimension_value: string }>`
      SELECT code, dimension_value FROM links.scan_values WHERE code = ANY(${unknown.map(String)}::bigint[])`.execute(
      db,
    );
    for (const row of rows) known.set(Number(row.code), row.dimension_value);
    const missing = unknown.find((code) => !known.has(code));
    if (missing !== undefined) {
      throw new Error(`links.scan_link_days holds the value code ${missing}, which links.scan_values lacks`);
    }
  }
  return known;
}

/** A link's scans and distinct visitors in one UTC hour, the hour given as hours since 1970. */
export interface HourCount {
  hour: number;
  scans: number;
  visitors: number;
}

/**
 * A link's scans per UTC hour from `fromMs` (included) to `toMs` (excluded), counted from the raw
 * scans, so only exact within the raw window; hours without scans are absent. An hour's visitors are
 * the distinct visitor hashes of its scans. links.raw_scans is read through its index, the link's
 * scans only, the hour from the key's time; scans of the days before 20270310T1100_raw_scans are read
 * from links.scan_events (and those before 20270120T1000_narrow_scans from links.scans) while they
 * still hold them.
 */
export async function hourlyScans(db: Db, linkId: string, fromMs: number, toMs: number): Promise<HourCount[]> {
  const { rows } = await sql<{ hour: string; scans: number; visitors: number }>`
    SELECT hour, count(*)::int AS scans, count(DISTINCT visitor)::int AS visitors FROM (
      SELECT (key >> 20) / 3600000 AS hour, visitor
      FROM links.raw_scans
      WHERE link = (SELECT number FROM links.links WHERE id = ${linkId})
        AND key >= ${firstKeyAt(fromMs)}::int8 AND key < ${firstKeyAt(toMs)}::int8
      UNION ALL
      SELECT ('x' || translate(left(id::text, 13), '-', ''))::bit(48)::bigint / 3600000 AS hour, visitor
      FROM links.scan_events
      WHERE link_id = ${linkId} AND id >= ${firstScanIdAt(fromMs)}::uuid AND id < ${firstScanIdAt(toMs)}::uuid
        AND to_timestamp(${fromMs / 1000}) < (SELECT narrow_until FROM links.scan_window)
      UNION ALL
      SELECT floor(extract(epoch FROM scanned_at) / 3600)::bigint, hashtextextended(visitor_key, 0)
      FROM links.scans
      WHERE link_id = ${linkId} AND scanned_at >= to_timestamp(${fromMs / 1000}) AND scanned_at < to_timestamp(${toMs / 1000})
        AND scanned_at < (SELECT legacy_until FROM links.scan_window)
    ) AS raw
    GROUP BY hour ORDER BY hour`.execute(db);
  return rows.map((row) => ({ hour: Number(row.hour), scans: row.scans, visitors: row.visitors }));
}

/**
 * The visitors of a link's scans on the days from `from` to `to` ("YYYY-MM-DD", inclusive), with
 * each scan's day, as rows (day, visitor) for a FROM clause: from links.raw_scans through its index,
 * and from the tables of visitor-days before 20270310T1100_raw_scans while they hold any. A visitor
 * may appear more than once a day.
 */
function visitorsOfDays(linkId: string, from: string, to: string) {
  const fromKey = firstKeyAt(Date.parse(`${from}T00:00:00Z`));
  const untilKey = firstKeyAt(Date.parse(`${to}T00:00:00Z`) + 86_400_000);
  return sql`(
    SELECT date '1970-01-01' + ((key >> 20) / 86400000)::int AS day, visitor FROM links.raw_scans
    WHERE link = (SELECT number FROM links.links WHERE id = ${linkId}) AND key >= ${fromKey}::int8 AND key < ${untilKey}::int8
    UNION ALL
    SELECT day, visitor FROM links.scan_visitor_days WHERE link_id = ${linkId} AND day BETWEEN ${from} AND ${to}
    UNION ALL
    SELECT day, hashtextextended(visitor_key, 0) FROM links.scan_day_visitors WHERE link_id = ${linkId} AND day BETWEEN ${from} AND ${to}
  ) AS visitors`;
}

/**
 * The distinct visitors of a link over the days from `from` to `to`, counted exactly from its raw
 * scans, provided it has at most `limit` visitor-days there; undefined when there are more.
 * How many there are is the sum of the days' distinct visitors (rollups and unfolded deltas: each
 * row added one), so a range with more is told from its day rows, without reading its visitors.
 */
export async function countVisitorsUpTo(
  db: Db,
  linkId: string,
  from: string,
  to: string,
  limit: number,
): Promise<number | undefined> {
  // The count is a sub-select Postgres runs only when the CASE reaches it; the days' distinct
  // visitors are read from their rows by links.scan_day_unique_scans (the format's SQL spelling).
  const { rows } = await sql<{ visitors: number | null }>`
    SELECT CASE WHEN visitor_days.n > ${limit} THEN NULL ELSE (
      SELECT count(DISTINCT visitor)::int FROM ${visitorsOfDays(linkId, from, to)}
    ) END AS visitors
    FROM (
      SELECT coalesce(sum(n), 0) AS n FROM (
        SELECT links.scan_day_unique_scans(counts) AS n FROM links.scan_link_days
        WHERE link_id = ${linkId} AND day BETWEEN ${from} AND ${to}
        UNION ALL
        SELECT visitors FROM links.scan_deltas WHERE link_id = ${linkId} AND day BETWEEN ${from} AND ${to}
      ) AS days
    ) AS visitor_days`.execute(db);
  return rows[0]!.visitors ?? undefined;
}

/**
 * The distinct visitors the rollups count for each link-day given (folded or not), keyed
 * "<link id>/<day>": what a sketch of the day is saved with.
 */
export async function dayUniqueScans(db: Db, days: { linkId: string; day: string }[]): Promise<Map<string, number>> {
  if (days.length === 0) return new Map();
  const { rows } = await sql<{ link_id: string; day: string; counts: Uint8Array | null; unfolded: string | number }>`
    SELECT given.link_id, to_char(given.day, 'YYYY-MM-DD') AS day, kept.counts, (
        SELECT coalesce(sum(visitors), 0) FROM links.scan_deltas AS deltas
        WHERE deltas.link_id = given.link_id AND deltas.day = given.day
      )::bigint AS unfolded
    FROM unnest(${days.map((d) => d.linkId)}::uuid[], ${days.map((d) => d.day)}::date[]) AS given (link_id, day)
    LEFT JOIN links.scan_link_days AS kept ON kept.link_id = given.link_id AND kept.day = given.day`.execute(db);
  return new Map(
    rows.map((row) => [
      `${row.link_id}/${row.day}`,
      Number(row.unfolded) + (row.counts === null ? 0 : decodeDayCounts(row.counts).uniqueScans),
    ]),
  );
}

/** The stored sketches of a link's days in a range, with the distinct visitors each had when it was built. */
export async function daySketches(
  db: Db,
  linkId: string,
  from: string,
  to: string,
): Promise<Map<string, { visitors: number; registers: Uint8Array }>> {
  const { rows } = await sql<{ day: string; sketch: Uint8Array }>`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, sketch FROM links.scan_link_days
    WHERE link_id = ${linkId} AND day BETWEEN ${from} AND ${to} AND sketch IS NOT NULL`.execute(db);
  return new Map(rows.map((row) => [row.day, decodeDaySketch(row.sketch)]));
}

/** Each visitor's register and rank on the given days, reduced to the highest rank per day and register. */
export async function dayRegisters(
  db: Db,
  linkId: string,
  days: string[],
): Promise<{ day: string; register: number; rank: number }[]> {
  if (days.length === 0) return [];
  // "YYYY-MM-DD" sorts as the days do: the scans read are those of the first day to the last.
  const sorted = [...days].sort();
  // Postgres keeps the lowest rank bits per register (an integer minimum); their rank is worked out here.
  const { rows } = await sql<{ day: string; register: number; bits: number }>`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, register, bits FROM (
      SELECT day, ${sql.raw(REGISTER_SQL)} AS register, min(${sql.raw(RANK_BITS_SQL)}) AS bits
      FROM ${visitorsOfDays(linkId, sorted[0]!, sorted.at(-1)!)}
      WHERE day = ANY(${days}::date[])
      GROUP BY 1, 2
    ) AS lowest`.execute(db);
  return rows.map(({ day, register, bits }) => ({ day, register, rank: rankOf(Number(bits)) }));
}

/** Keeps the sketches of days that are over, so the next range that spans them reads a few bytes a day. */
export async function saveDaySketches(
  db: Db,
  linkId: string,
  sketches: { day: string; visitors: number; registers: Uint8Array }[],
): Promise<void> {
  await saveLinkDaySketches(
    db,
    sketches.map((sketch) => ({ linkId, ...sketch })),
  );
}

/** Link-days whose sketches one statement writes. */
const SKETCH_CHUNK = 1000;

/**
 * {@link saveDaySketches} for the days of many links at once. A sketch goes into its link-day's row;
 * a link-day no fold has written yet gets a row counting nothing, which the fold then adds to.
 */
export async function saveLinkDaySketches(
  db: Db,
  sketches: { linkId: string; day: string; visitors: number; registers: Uint8Array }[],
): Promise<void> {
  const nothingCounted = Buffer.from(encodeDayCounts(emptyDayCounts())).toString("hex");
  for (let start = 0; start < sketches.length; start += SKETCH_CHUNK) {
    const chunk = sketches.slice(start, start + SKETCH_CHUNK);
    await sql`
      INSERT INTO links.scan_link_days (link_id, day, counts, sketch)
      SELECT link_id, day, decode(${nothingCounted}, 'hex'), decode(sketch, 'hex')
      FROM unnest(${chunk.map((s) => s.linkId)}::uuid[], ${chunk.map((s) => s.day)}::date[],
        ${chunk.map((s) => Buffer.from(encodeDaySketch(s.visitors, s.registers)).toString("hex"))}::text[]) AS given (link_id, day, sketch)
      ON CONFLICT (link_id, day) DO UPDATE SET sketch = excluded.sketch`.execute(db);
  }
}
