import { sql, type Kysely } from "kysely";
import type { ScanColumns } from "../../src/scans/scan-columns.js";
import { storeScans } from "../../src/scans/analytics/scan-store.js";
import type { LinksTables } from "../../src/tables.js";

/**
 * Stores scans with this version's writer once links.raw_scans exists (20270310T1100_raw_scans), and
 * before it as the versions of then stored them: for tests of the migrations before that one, which
 * store scans while migrating. The scans' OS, browser and referrer are taken as iOS, Safari and none.
 */
export async function storeScansOfThen(
  db: Kysely<any>,
  links: Kysely<LinksTables>,
  columns: ScanColumns,
): Promise<void> {
  const { rows } = await sql<{ raw: string | null }>`select to_regclass('links.raw_scans')::text as raw`.execute(db);
  if (rows[0]!.raw !== null) await storeScans(links, columns);
  else await storeAsNarrow(db, columns);
}

/** As the writer of 20270120T1000_narrow_scans stored a batch: scan rows, visitor-days and deltas. */
function storeAsNarrow(db: Kysely<any>, columns: ScanColumns) {
  return sql`WITH batch AS (
      SELECT given.*, link.account_id, (to_timestamp(given.ms / 1000) AT TIME ZONE 'UTC')::date AS day,
        hashtextextended(given.visitor_key, 0) AS visitor
      FROM unnest(${columns.id}::uuid[], ${columns.linkId}::uuid[], ${columns.scannedAtMs}::float8[], ${columns.country}::text[],
        ${columns.deviceType}::text[], ${columns.visitorKey}::text[]) AS given (id, link_id, ms, country, device_type, visitor_key)
      JOIN links.links AS link ON link.id = given.link_id),
    inserted AS (
      INSERT INTO links.scan_events (id, link_id, visitor, agent, country, referrer_host)
      SELECT id, link_id, visitor, hashtextextended(row(device_type, 'iOS', 'Safari')::text, 0), country, '' FROM batch
      ON CONFLICT (id) DO NOTHING RETURNING id),
    stored AS (SELECT batch.* FROM batch JOIN inserted USING (id)),
    new_visitors AS (
      INSERT INTO links.scan_visitor_days (link_id, day, visitor) SELECT DISTINCT link_id, day, visitor FROM stored
      ON CONFLICT DO NOTHING RETURNING 1)
    INSERT INTO links.scan_deltas (link_id, account_id, day, country, device_type, os, browser, referrer_host, rule, scans, visitors)
    SELECT link_id, account_id, day, country, device_type, 'iOS', 'Safari', '', '', count(*),
      CASE WHEN row_number() OVER () = 1 THEN (SELECT count(*) FROM new_visitors) ELSE 0 END
    FROM stored GROUP BY 1, 2, 3, 4, 5`.execute(db);
}
