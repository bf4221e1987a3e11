import { createHash } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { isUniqueViolation } from "@qrplatform/platform";
import type { LinksTables } from "../../tables.js";
import type { ScanColumns } from "../scan-columns.js";
import { ruleValue } from "./scan-dimensions.js";
import { DAY_KEYS } from "./scan-keys.js";

type Db = Kysely<LinksTables>;

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
 * combination of link, day and values (with the new visitors among its scans when its day is closed):
 * about one row per scan at most. Nothing here updates a row another batch may hold, so batches stored at once
 * (several redirectors, several links instances) never wait on each other; {@link foldScanDeltas}
 * moves the deltas into the rollups later, one folder at a time.
 *
 * A scan's key in links.raw_scans, by which it is partitioned, is its time in milliseconds × 2^20
 * plus 20 bits of its id ({@link keyBitsOf}) when that is a UUIDv7 of its own time (as the recorder
 * makes them), else of one made from its time and id ({@link scanKey}). Two scans share a key only
 * when their times agree to the millisecond and those 20 bits agree; the unique index also holds the
 * link and the visitor, so only one visitor's scans of one link in one millisecond can collide (one
 * pair in 2^20), and the second is then taken for the first sent again. Distinct visitors are counted
 * here only for days already closed (late scans); a day's close counts the rest: see `visits` below.
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
  // Only scans whose day has a partition: one older than the retention is past deduplication, and is
  // not stored. One of the days before 20270310T1100_raw_scans may be stored in the tables of then.
  const taken = sql`in_window
    AND (NOT in_narrow OR NOT EXISTS (SELECT 1 FROM links.scan_events AS narrow WHERE narrow.id = batch.id))
    AND (NOT in_legacy OR NOT EXISTS (
      SELECT 1 FROM links.scans AS wide WHERE wide.id = batch.given_id AND wide.scanned_at = batch.scanned_at))`;
  const result = await sql<{ stored: number; expired: number; ids: string[] | null }>`
    WITH batch AS MATERIALIZED (
      SELECT ${again ? sql`DISTINCT ON (link.number, hashtextextended(given.visitor_key, 0), keyed.key)` : sql``}
        given.id, coalesce(given.given_id, given.id) AS given_id, given.link_id, link.number AS link, link.account_id, keyed.key,
        to_timestamp(given.scanned_at_ms / 1000) AS scanned_at, (to_timestamp(given.scanned_at_ms / 1000) AT TIME ZONE 'UTC')::date AS day,
        (keyed.key >> 20) / 86400000 * ${DAY_KEYS} AS day_key,
        given.country, given.device_type, given.os, given.browser, given.referrer_host, given.visitor_key,
        coalesce(given.rule, '') AS rule,
        hashtextextended(given.visitor_key, 0) AS visitor,
        hashtextextended(row(given.device_type, given.os, given.browser, given.country, given.referrer_host)::text, 0) AS context,
        to_timestamp(given.scanned_at_ms / 1000) < (SELECT legacy_until FROM links.scan_window) AS in_legacy,
        to_timestamp(given.scanned_at_ms / 1000) < (SELECT narrow_until FROM links.scan_window) AS in_narrow,
        to_timestamp(given.scanned_at_ms / 1000) >= (SELECT kept_from FROM links.scan_window)
          AND to_timestamp(given.scanned_at_ms / 1000) < (SELECT until FROM links.scan_window) AS in_window,
        -- Locked until this statement commits: the partition manager closes a day only once no batch
        -- that read it open is left uncommitted (scan-partitions.ts).
        (to_timestamp(given.scanned_at_ms / 1000) AT TIME ZONE 'UTC')::date
          < coalesce((SELECT closed_until FROM links.scan_day_close FOR SHARE), 'infinity') AS in_closed_day
      -- given_id: the ids as sent when some are not their keys, else "{}", which unnest pads with NULLs.
      FROM unnest(
        ${arrayLiteral(ids)}::uuid[], ${keys ? arrayLiteral(scans.id) : "{}"}::uuid[], ${numberArrayLiteral(ids.map(keyBitsOf))}::int4[],
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
      SELECT link, key, visitor, context FROM batch WHERE ${taken}
      ${again ? sql`ON CONFLICT DO NOTHING` : sql``}
      RETURNING link, key, visitor
    ),
    -- Without ON CONFLICT the insert took every scan it was given or failed the statement, so the
    -- stored scans are those given to it; with it, those it returned.
    stored AS (
      ${again ? sql`SELECT batch.* FROM inserted JOIN batch USING (link, key, visitor)` : sql`SELECT * FROM batch WHERE ${taken}`}
    ),
    -- The visitors of a day that is not closed yet are counted by its close, from its raw scans. A late
    -- scan of a closed day is a new visitor of its link-day when no other scan of the link, visitor and
    -- day was stored before this statement (the index, probed) and it is the first of the batch for them.
    visits AS (
      SELECT *, (in_closed_day AND row_number() OVER (PARTITION BY link, visitor, day) = 1
        AND NOT EXISTS (
          SELECT 1 FROM links.raw_scans AS seen
          WHERE seen.link = first.link AND seen.visitor = first.visitor
            AND seen.key >= first.day_key AND seen.key < first.day_key + ${DAY_KEYS})
        AND (NOT in_narrow OR NOT EXISTS (
          SELECT 1 FROM links.scan_visitor_days AS narrow
          WHERE narrow.link_id = first.link_id AND narrow.day = first.day AND narrow.visitor = first.visitor))
        AND (NOT in_legacy OR NOT EXISTS (
          SELECT 1 FROM links.scan_day_visitors AS wide
          WHERE wide.link_id = first.link_id AND wide.day = first.day AND wide.visitor_key = first.visitor_key))
      ) AS new_visitor
      FROM stored AS first
    ),
    -- One row per combination of link, day and values, with the new visitors among its scans: the
    -- readers, the fold and the day's close add a link-day's visitors up over its rows.
    deltas AS (
      INSERT INTO links.scan_deltas (link_id, account_id, day, country, device_type, os, browser, referrer_host, rule, scans, visitors)
      SELECT link_id, account_id, day, country, device_type, os, browser, referrer_host, rule, count(*), count(*) FILTER (WHERE new_visitor)
      FROM visits GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
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
