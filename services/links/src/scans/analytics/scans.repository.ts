import { createHash } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { isUniqueViolation } from "@qrplatform/platform";
import type { LinksTables } from "../../tables.js";
import { NO_VARIANT, type ScanColumns } from "../scan-columns.js";
import { DAY_KEYS, firstKeyAt, firstScanIdAt } from "./scan-partitions.js";
import { decodeDayCounts, decodeDaySketch, emptyDayCounts, encodeDayCounts, encodeDaySketch } from "./day-encoding.js";
import type { ScanDeltasTable } from "./scans.table.js";
import { RANK_BITS_SQL, rankOf, REGISTER_SQL } from "./visitor-sketch.js";

type Db = Kysely<LinksTables>;

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
const DELTA_BY_DIMENSION = sql`(VALUES ${sql.join(
  Object.entries(DIMENSIONS).map(
    ([dimension, column]) =>
      sql`(${sql.lit(dimension)}, ${sql.ref(`deltas.${column}`)}, ${sql.lit(DIMENSION_CODES[dimension as Dimension])} || ${sql.ref(`deltas.${column}`)})`,
  ),
)}) AS breakdown (dimension, value, dimension_value)`;

/** The breakdowns a delta counts in: every one but an empty `rule` (no rule decided the scans). */
const COUNTED_BREAKDOWN = sql`(breakdown.value <> '' OR breakdown.dimension <> 'rule')`;

/**
 * The `rule` breakdown's value of a scan: the rule's id, "<rule id>/<variant>" for a split rule's
 * variant (so one row per variant, and the rule's scans are their sum), "" when no rule decided.
 */
export function ruleValue(ruleId: string, variant: number): string {
  if (ruleId === "") return "";
  return variant === NO_VARIANT ? ruleId : `${ruleId}/${variant}`;
}

/** The batch's `rule` column as an array literal, or "{}" when no rule decided any of its scans (unnest pads it with NULLs). */
function ruleLiteral(scans: ScanColumns): string {
  if (scans.ruleId.every((id) => id === "")) return "{}";
  return arrayLiteral(scans.ruleId.map((id, i) => ruleValue(id, scans.variant[i]!)));
}

/**
 * Stores a batch of scans and what they add to the rollups, in one statement (so one transaction): a
 * scan is either stored and counted everywhere, or not at all. Scans already stored (by their link,
 * visitor and key) are skipped, so a batch that is sent again (after a timeout, say) changes nothing, and so are scans of
 * links that do not exist (purged since), and scans outside links.scan_window (older than the
 * retention, or days ahead of any partition: see scan-partitions.ts), which `onExpired` hears of;
 * each scan takes its link's account.
 *
 * The batch travels as one array per column and Postgres does the counting: the rows come out of
 * `unnest`, and the batch's additions to the rollups are appended to links.scan_deltas, one row per
 * combination of link, day and values (with the link's new visitor-days of the day on one of them):
 * about one row per scan at most. Nothing here updates a row another batch may hold, so batches stored at once
 * (several redirectors, several links instances) never wait on each other; {@link foldScanDeltas}
 * moves the deltas into the rollups later, one folder at a time.
 *
 * A scan's key in links.raw_scans, by which it is partitioned, is its time in milliseconds × 2^20
 * plus 20 bits of its id ({@link keyBitsOf}) when that is a UUIDv7 of its own time (as the recorder
 * makes them), else of one made from its time and id ({@link scanKey}). Two scans share a key only
 * when their times agree to the millisecond and those 20 bits agree; the unique index also holds the
 * link and the visitor, so only one visitor's scans of one link in one millisecond can collide (one
 * pair in 2^20), and the second is then taken for the first sent again. The scan is a new visitor of
 * its link-day when no other scan of theirs that day is stored: see new_visitors below.
 *
 * Answers undefined when every scan given was stored (the usual case, which then sends no ids back),
 * else the ids of those that were.
 */
export async function storeScans(
  db: Db,
  scans: ScanColumns,
  onExpired: (scans: number) => void = () => {},
): Promise<Set<string> | undefined> {
  if (scans.id.length === 0) return undefined;
  const keys = scanKeys(scans);
  try {
    // Most batches are new: inserted without looking each id up first, which costs Postgres a probe of the key per scan.
    return await storeScansOnce(db, scans, keys, false, onExpired);
  } catch (error) {
    // An id already stored (a batch sent again) failed the statement, which changed nothing: it goes again, skipping those.
    if (!isUniqueViolation(error)) throw error;
    return storeScansOnce(db, scans, keys, true, onExpired);
  }
}

async function storeScansOnce(
  db: Db,
  scans: ScanColumns,
  keys: string[] | undefined,
  again: boolean,
  onExpired: (scans: number) => void,
): Promise<Set<string> | undefined> {
  const given = scans.id.length;
  const ids = keys ?? scans.id;
  const result = await sql<{ stored: number; expired: number; ids: string[] | null }>`
    WITH batch AS MATERIALIZED (
      SELECT ${again ? sql`DISTINCT ON (link.number, hashtextextended(given.visitor_key, 0), keyed.key)` : sql``}
        given.id, given.given_id, given.link_id, link.number AS link, link.account_id, keyed.key,
        to_timestamp(given.scanned_at_ms / 1000) AS scanned_at, (to_timestamp(given.scanned_at_ms / 1000) AT TIME ZONE 'UTC')::date AS day,
        (keyed.key >> 20) / 86400000 * ${DAY_KEYS} AS day_key,
        given.country, given.device_type, given.os, given.browser, given.referrer_host, given.visitor_key,
        coalesce(given.rule, '') AS rule,
        hashtextextended(given.visitor_key, 0) AS visitor,
        hashtextextended(row(given.device_type, given.os, given.browser, given.country, given.referrer_host)::text, 0) AS context,
        to_timestamp(given.scanned_at_ms / 1000) < (SELECT legacy_until FROM links.scan_window) AS in_legacy,
        to_timestamp(given.scanned_at_ms / 1000) < (SELECT narrow_until FROM links.scan_window) AS in_narrow,
        to_timestamp(given.scanned_at_ms / 1000) >= (SELECT kept_from FROM links.scan_window)
          AND to_timestamp(given.scanned_at_ms / 1000) < (SELECT until FROM links.scan_window) AS in_window
      FROM unnest(
        ${arrayLiteral(ids)}::uuid[], ${keys ? arrayLiteral(scans.id) : arrayLiteral(ids)}::uuid[], ${numberArrayLiteral(ids.map(keyBitsOf))}::int4[],
        ${arrayLiteral(scans.linkId)}::uuid[],
        ${numberArrayLiteral(scans.scannedAtMs)}::float8[], ${arrayLiteral(scans.country)}::text[], ${arrayLiteral(scans.deviceType)}::text[],
        ${arrayLiteral(scans.os)}::text[], ${arrayLiteral(scans.browser)}::text[], ${arrayLiteral(scans.referrerHost)}::text[],
        ${arrayLiteral(scans.visitorKey)}::text[], ${ruleLiteral(scans)}::text[]
      ) AS given (id, given_id, key_bits, link_id, scanned_at_ms, country, device_type, os, browser, referrer_host, visitor_key, rule)
      -- The window is read once (scalar sub-selects): a join with links.scan_window, which has no
      -- statistics, made the planner expect thousands of rows for each scan.
      JOIN links.links AS link ON link.id = given.link_id
      -- The key's time is its id's; a time past what a key holds is clamped (outside the window, it is not stored).
      CROSS JOIN LATERAL (SELECT least(greatest(floor(given.scanned_at_ms), 0), ${MAX_KEY_MS})::bigint * 1048576 + given.key_bits AS key) AS keyed
    ),
    contexts AS (
      INSERT INTO links.scan_contexts (code, device_type, os, browser, country, referrer_host)
      SELECT DISTINCT ON (context) context, device_type, os, browser, country, referrer_host FROM batch
      WHERE in_window AND NOT EXISTS (SELECT 1 FROM links.scan_contexts AS known WHERE known.code = batch.context)
      ON CONFLICT (code) DO NOTHING
    ),
    inserted AS (
      INSERT INTO links.raw_scans (link, key, visitor, context)
      SELECT link, key, visitor, context FROM batch
      -- Only scans whose day has a partition: one older than the retention is past deduplication, and is
      -- not stored. One of the days before 20270310T1100_raw_scans may be stored in the tables of then.
      WHERE in_window
        AND (NOT in_narrow OR NOT EXISTS (SELECT 1 FROM links.scan_events AS narrow WHERE narrow.id = batch.id))
        AND (NOT in_legacy OR NOT EXISTS (
          SELECT 1 FROM links.scans AS wide WHERE wide.id = batch.given_id AND wide.scanned_at = batch.scanned_at))
      ${again ? sql`ON CONFLICT DO NOTHING` : sql``}
      RETURNING link, key, visitor
    ),
    stored AS (
      SELECT batch.* FROM inserted JOIN batch USING (link, key, visitor)
    ),
    -- A scan is a new visitor of its link-day when no other scan of the link, visitor and day was stored
    -- before this statement (the index, probed), and it is the first of the batch for them. Two batches
    -- stored at once can both count one visitor; the partition manager recounts the day once it is over.
    new_visitors AS (
      SELECT DISTINCT link_id, day, visitor FROM stored
      WHERE NOT EXISTS (
          SELECT 1 FROM links.raw_scans AS seen
          WHERE seen.link = stored.link AND seen.visitor = stored.visitor
            AND seen.key >= stored.day_key AND seen.key < stored.day_key + ${DAY_KEYS})
        AND (NOT in_narrow OR NOT EXISTS (
          SELECT 1 FROM links.scan_visitor_days AS narrow
          WHERE narrow.link_id = stored.link_id AND narrow.day = stored.day AND narrow.visitor = stored.visitor))
        AND (NOT in_legacy OR NOT EXISTS (
          SELECT 1 FROM links.scan_day_visitors AS wide
          WHERE wide.link_id = stored.link_id AND wide.day = stored.day AND wide.visitor_key = stored.visitor_key))
    ),
    deltas AS (
      INSERT INTO links.scan_deltas (link_id, account_id, day, country, device_type, os, browser, referrer_host, rule, scans, visitors)
      SELECT combination.link_id, account_id, combination.day, country, device_type, os, browser, referrer_host, rule, scans,
        -- The link's new visitor-days of that day go on one of its rows.
        CASE WHEN row_number() OVER (PARTITION BY combination.link_id, combination.day) = 1 THEN coalesce(visitors, 0) ELSE 0 END
      FROM (
        SELECT link_id, account_id, day, country, device_type, os, browser, referrer_host, rule, count(*) AS scans
        FROM stored GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
      ) AS combination
      LEFT JOIN (SELECT link_id, day, count(*) AS visitors FROM new_visitors GROUP BY 1, 2) AS by_visitor USING (link_id, day)
    ),
    stored_count AS (SELECT count(*)::int AS n FROM stored)
    -- The ids are read only when some scan was not stored: the sub-select runs only when the CASE reaches it.
    SELECT n AS stored, (SELECT count(*)::int FROM batch WHERE NOT in_window) AS expired,
      CASE WHEN n = ${given} THEN NULL ELSE (SELECT coalesce(array_agg(given_id::text), '{}') FROM stored) END AS ids FROM stored_count
  `.execute(db);
  const { ids: storedIds, expired } = result.rows[0]!;
  if (expired > 0) onExpired(expired);
  return storedIds === null ? undefined : new Set(storedIds);
}

/** The last millisecond a key holds (in the year 2248): its time × 2^20 fills 63 bits. */
const MAX_KEY_MS = sql.lit(2 ** 43 - 1);

/**
 * The 20 bits of a scan's id that its key in links.raw_scans holds below its time (milliseconds ×
 * 2^20): the 12 after the UUIDv7's version digit and the 8 after its variant digit, random in the
 * recorder's ids and a hash in any other ({@link scanKeys}), so a scan sent again gets the same key.
 * 20270310T1100_raw_scans computes the same in SQL for the version before's writers.
 */
function keyBitsOf(id: string): number {
  return Number.parseInt(id.slice(15, 18) + id.slice(20, 22), 16);
}

/**
 * The keys the batch's scans are stored under, or undefined when every id already is its key (a
 * UUIDv7 whose time is the scan's, as the recorder makes them): a scan's key must hold its time, by
 * which links.raw_scans is partitioned (and links.scan_events was). Any other id gets a key of its time and a hash of the id, so a
 * scan sent again gets the same key.
 */
function scanKeys(scans: ScanColumns): string[] | undefined {
  let keys: string[] | undefined;
  for (let i = 0; i < scans.id.length; i++) {
    const id = scans.id[i]!;
    const prefix = keyPrefixAt(scans.scannedAtMs[i]!);
    if (keys === undefined && id.startsWith(prefix)) continue;
    keys ??= scans.id.slice(0, i);
    keys.push(id.startsWith(prefix) ? id : scanKey(prefix, id));
  }
  return keys;
}

let prefixMs = Number.NaN;
let prefix = "";

/** "xxxxxxxx-xxxx-7": the start of every UUIDv7 of the millisecond `ms` (clamped to what 48 bits hold). */
function keyPrefixAt(ms: number): string {
  if (ms !== prefixMs) {
    const time = Math.min(Math.max(0, Math.floor(ms)), 2 ** 48 - 1) || 0;
    const hex = time.toString(16).padStart(12, "0");
    prefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7`;
    prefixMs = ms;
  }
  return prefix;
}

/** A UUIDv7 of the time `prefix` holds whose other bits come from a SHA-256 of `id`. */
function scanKey(prefix: string, id: string): string {
  const hash = createHash("sha256").update(id).digest("hex");
  const variant = ((Number.parseInt(hash[3]!, 16) & 0x3) | 0x8).toString(16);
  return `${prefix}${hash.slice(0, 3)}-${variant}${hash.slice(4, 7)}-${hash.slice(7, 19)}`;
}

/**
 * A Postgres array literal of text values, for a `::type[]` cast: each element quoted, its quotes and
 * backslashes escaped. Written here rather than by pg's own array formatting, which escapes every
 * element with two regular-expression replacements. A column with nothing to escape (ids, codes,
 * almost every batch's names) is one join: building the literals of a batch of 5,000 scans is work
 * the thread answering redirects does in one go on PGlite (ADR 0014).
 */
function arrayLiteral(values: readonly string[]): string {
  if (values.length === 0) return "{}";
  if (!NEEDS_ESCAPE.test(values.join(""))) return `{"${values.join('","')}"}`;
  const quoted = values.map((value) =>
    NEEDS_ESCAPE.test(value) ? `"${value.replace(/[\\"]/g, "\\$&")}"` : `"${value}"`,
  );
  return `{${quoted.join(",")}}`;
}
const NEEDS_ESCAPE = /[\\"]/;

function numberArrayLiteral(values: readonly (number | string)[]): string {
  return `{${values.join(",")}}`;
}

/** Any number that is ours alone: the advisory lock only one folder holds at a time, across every links instance. */
const FOLD_LOCK = 0x71720001;

/**
 * Moves every committed delta into the rollups, in one transaction: deleted from links.scan_deltas
 * and added to scan_totals and the link-days' rows of links.scan_link_days together, so a reader that
 * adds rollups and deltas in one statement counts each scan once, before, during and after. Only one
 * folder runs at a time (an advisory lock; a second one returns at once), so the rows' counts have
 * one writer and never change under it. The same transaction writes `link.scanned` outbox events,
 * one per account folded (per thousand of its links), with each link's count, so webhooks hear of
 * every stored scan exactly once and in batches. Returns the deltas folded, or undefined when another
 * folder holds the lock.
 *
 * Postgres adds the deltas up (per link-day, and per link-day and value, coding new values) and
 * hands each touched link-day back with the counts its row holds; the counts are merged here
 * (day-encoding.ts) and written back in one upsert per few thousand link-days.
 */
export async function foldScanDeltas(db: Db): Promise<number | undefined> {
  return db.transaction().execute(async (trx) => {
    const { rows: locked } = await sql<{
      locked: boolean;
    }>`SELECT pg_try_advisory_xact_lock(${FOLD_LOCK}) AS locked`.execute(trx);
    if (!locked[0]!.locked) return undefined;
    // A fold after an outage may hold millions of deltas: their aggregates stay in memory rather than sort on disk.
    await sql`SET LOCAL work_mem = '64MB'`.execute(trx);
    const { rows } = await sql<{
      link_id: string;
      day: string;
      scans: string | number;
      visitors: string | number;
      codes: (string | number)[];
      counts: (string | number)[];
      kept: Uint8Array | null;
      folded: number;
    }>`
      WITH folded AS (
        DELETE FROM links.scan_deltas RETURNING *
      ),
      totals AS (
        INSERT INTO links.scan_totals (link_id, account_id, scans)
        SELECT link_id, account_id, sum(scans) FROM folded GROUP BY 1, 2 HAVING sum(scans) > 0
        ON CONFLICT (link_id) DO UPDATE SET scans = scan_totals.scans + excluded.scans
      ),
      scanned AS (
        -- One outbox event per account per fold (a thousand links at most each), carrying each link's
        -- count: webhooks hear of scans in batches, and the catalog relays a busy account in one step.
        INSERT INTO links.outbox_events (account_id, type, link_ids, scan_counts)
        SELECT account_id, 'link.scanned', array_agg(link_id ORDER BY link_id), array_agg(scans ORDER BY link_id)
        FROM (
          SELECT account_id, link_id, sum(scans) AS scans, (row_number() OVER (PARTITION BY account_id ORDER BY link_id) - 1) / 1000 AS chunk
          -- A link whose deltas only correct its distinct visitors (scan-partitions.ts) was not scanned.
          FROM folded GROUP BY 1, 2 HAVING sum(scans) > 0
        ) AS per_link
        GROUP BY account_id, chunk
      ),
      -- Deltas of one combination are added up before they are spread over the breakdowns, so the
      -- breakdowns' aggregate sorts or hashes a row per combination and breakdown, not per delta.
      combinations AS (
        SELECT link_id, day, country, device_type, os, browser, referrer_host, rule, sum(scans) AS scans FROM folded GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
      ),
      -- A value whose deltas add no scans (a correction of visitors only) adds nothing to the breakdowns.
      day_values AS (
        SELECT deltas.link_id, deltas.day, breakdown.dimension_value, sum(deltas.scans) AS scans
        FROM combinations AS deltas CROSS JOIN LATERAL ${DELTA_BY_DIMENSION}
        WHERE ${COUNTED_BREAKDOWN}
        GROUP BY 1, 2, 3
        HAVING sum(deltas.scans) <> 0
      ),
      -- Values seen for the first time get a code; the folder is the only writer (its lock).
      new_codes AS (
        INSERT INTO links.scan_values (dimension_value)
        SELECT DISTINCT dimension_value FROM day_values
        WHERE NOT EXISTS (SELECT 1 FROM links.scan_values AS known WHERE known.dimension_value = day_values.dimension_value)
        ON CONFLICT (dimension_value) DO NOTHING
        RETURNING code, dimension_value
      ),
      -- The folder's lock keeps this complete: a value another writer inserted would hit DO NOTHING, in neither snapshot nor RETURNING.
      codes AS (
        SELECT code, dimension_value FROM links.scan_values WHERE dimension_value IN (SELECT dimension_value FROM day_values)
        UNION ALL
        SELECT code, dimension_value FROM new_codes
      ),
      added AS (
        SELECT link_id, day, array_agg(code) AS codes, array_agg(scans::bigint) AS counts
        FROM day_values JOIN codes USING (dimension_value)
        GROUP BY 1, 2
      ),
      touched AS (
        SELECT link_id, day, sum(scans)::bigint AS scans, sum(visitors)::bigint AS visitors FROM folded GROUP BY 1, 2
      )
      SELECT touched.link_id, to_char(touched.day, 'YYYY-MM-DD') AS day, touched.scans, touched.visitors,
        coalesce(added.codes, '{}') AS codes, coalesce(added.counts, '{}') AS counts, kept.counts AS kept,
        (SELECT count(*) FROM folded)::int AS folded
      FROM touched
      LEFT JOIN added USING (link_id, day)
      LEFT JOIN links.scan_link_days AS kept USING (link_id, day)
    `.execute(trx);
    const merged = rows.map((row) => {
      const counts = row.kept === null ? emptyDayCounts() : decodeDayCounts(row.kept);
      counts.scans += Number(row.scans);
      counts.uniqueScans += Number(row.visitors);
      for (const [i, code] of row.codes.entries()) {
        const value = Number(code);
        counts.values.set(value, (counts.values.get(value) ?? 0) + Number(row.counts[i]));
      }
      return { linkId: row.link_id, day: row.day, counts: encodeDayCounts(counts) };
    });
    for (let start = 0; start < merged.length; start += UPSERT_CHUNK) {
      const chunk = merged.slice(start, start + UPSERT_CHUNK);
      // A row a sketch made first (no fold had written one) keeps its sketch; only the counts change.
      await sql`
        INSERT INTO links.scan_link_days (link_id, day, counts)
        SELECT link_id, day, decode(counts, 'hex')
        FROM unnest(${chunk.map((row) => row.linkId)}::uuid[], ${chunk.map((row) => row.day)}::date[],
          ${chunk.map((row) => Buffer.from(row.counts).toString("hex"))}::text[]) AS merged (link_id, day, counts)
        ON CONFLICT (link_id, day) DO UPDATE SET counts = excluded.counts`.execute(trx);
    }
    return rows[0]?.folded ?? 0;
  });
}

/** Link-days written back by one statement of a fold. */
const UPSERT_CHUNK = 5000;

/**
 * Reclaims the rows folds deleted from links.scan_deltas, so the next fold's scan and every reader's
 * read only the live deltas. Autovacuum looks at a table once a minute at most, by when a busy
 * minute has left a million dead rows: hundreds of megabytes that each fold and each analytics read
 * walk through. SKIP_LOCKED: when another instance's vacuum is at it, this one has nothing to do.
 */
export async function vacuumScanDeltas(db: Db): Promise<void> {
  await sql`VACUUM (SKIP_LOCKED) links.scan_deltas`.execute(db);
}

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
 * deltas not folded yet. A day the partition manager has not closed yet (today, and until about an
 * hour after midnight the day before) takes its distinct visitors from its raw scans instead: two
 * batches stored at once may both have counted one visitor there, which only the day's close corrects.
 */
export interface ScanSummary {
  daily: { day: string; scans: number; uniqueScans: number }[];
  breakdowns: { dimension: string; value: string; scans: number }[];
}

export async function summarizeScans(db: Db, linkId: string, from: string, to: string): Promise<ScanSummary> {
  const [{ rows }, open] = await Promise.all([
    summaryRows(db, linkId, from, to),
    openDayVisitors(db, linkId, from, to),
  ]);
  return summaryOf(db, rows, open);
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
 * The exact distinct visitors of each day of a link's range that is not closed yet (from
 * links.scan_window.closed_until), counted from its raw scans through their index, and from the
 * visitor-days a writer of the version before 20270310T1100_raw_scans may still add during an upgrade.
 */
async function openDayVisitors(db: Db, linkId: string, from: string, to: string): Promise<Map<string, number>> {
  const { rows: window } = await sql<{ closed: string | null }>`
    SELECT to_char(closed_until, 'YYYY-MM-DD') AS closed FROM links.scan_window`.execute(db);
  const closed = window[0]?.closed ?? null;
  const first = closed !== null && closed > from ? closed : from;
  if (closed === null || first > to) return new Map();
  const { rows } = await sql<{ day: string; visitors: number }>`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, count(DISTINCT visitor)::int AS visitors
    FROM ${visitorsOfDays(linkId, first, to)}
    GROUP BY day`.execute(db);
  return new Map(rows.map((row) => [row.day, row.visitors]));
}

async function summaryOf(
  db: Db,
  rows: Awaited<ReturnType<typeof summaryRows>>["rows"],
  openDays: Map<string, number>,
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
  for (const [day, visitors] of openDays) {
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

/** The dimension of a value as links.scan_values spells it; only the folds write it, from DIMENSION_CODES. */
function dimensionOf(dimensionValue: string): Dimension {
  const dimension = DIMENSION_OF_CODE.get(dimensionValue.slice(0, 1));
  if (dimension === undefined) throw new Error(`links.scan_values holds "${dimensionValue}", of no known dimension`);
  return dimension;
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
