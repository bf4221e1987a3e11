import { sql, type Kysely } from "kysely";
import type { LinksTables } from "../../tables.js";
import { COUNTED_BREAKDOWN, DELTA_BY_DIMENSION } from "./scan-dimensions.js";
import { decodeDayCounts, emptyDayCounts, encodeDayCounts } from "./day-encoding.js";

type Db = Kysely<LinksTables>;

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
 * TRUNCATE false: the emptied pages at the table's end fill again within a second, and giving them
 * back would take a lock that stops every writer, retried for up to seconds.
 */
export async function vacuumScanDeltas(db: Db): Promise<void> {
  await sql`VACUUM (SKIP_LOCKED, TRUNCATE false) links.scan_deltas`.execute(db);
}
