// Bytes each stored scan costs on Postgres, tables and indexes: the raw window (links.raw_scans, every
// partition, and its dictionary links.scan_contexts) and what outlives it (scan_link_days, scan_totals,
// scan_values, and scan_day_sketches, which only the version before 20270310T1000_packed_day_rollups
// writes), beside the budget of issue 34, and what 100 million scans a day cost at the default
// retention. The scans go through the service's own write path (storeScans, the fold, the partition
// manager) with the shape of the analytics dataset: 1,000 links, one hot, the rest falling off as
// n^-0.8, a sixth as many visitors as scans, and its density of about 25,000 scans a day (10 million
// over 400 days), so the per-scan figures of the tables with a row per scan or per link-day are the
// 10-million-scan dataset's. The tables with a row per link or per value (scan_totals, scan_values)
// hold the same rows at 10 million scans as here, so their bytes are divided by 10 million, not by the
// scans stored. It also times the hourly read of the hot link (hourlyScans, 31 days), which follows
// that link's scans through the raw table's index.
//
// Storage is measured as a running service has it: the days are closed one after another, each
// followed by a vacuum of the link-day rows (as autovacuum would run), so the versions a fold or a
// day's sketch leaves behind are freed and their space reused by the next days' rows; what is
// measured is the tables' whole size, that free space included.
import { randomUUID } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { openDatabase } from "@qrplatform/db";
import { adminQuery } from "@qrplatform/db/testing";
import { PAGE_TOKEN_SECRET } from "@qrplatform/testing";
import { buildLinks, SCAN_RETENTION_DAYS } from "../../services/links/src/server.js";
import { emptyScanColumns, type ScanColumns } from "../../services/links/src/scans/scan-columns.js";
import { timeOrderedScanId } from "../../services/links/src/scans/recording/scan-id.js";
import { maintainScanPartitions } from "../../services/links/src/scans/analytics/scan-partitions.js";
import { foldScanDeltas } from "../../services/links/src/scans/analytics/scan-fold.js";
import { storeScans } from "../../services/links/src/scans/analytics/scan-store.js";
import { hourlyScans } from "../../services/links/src/scans/analytics/scans.repository.js";
import type { LinksTables } from "../../services/links/src/tables.js";

const DAY_MS = 86_400_000;
const LINKS = 1000;
const SCANS_PER_DAY = 25_000;
const BATCH = 5000;
const RAW_BUDGET = 120;
const ROLLUP_BUDGET = 10;
/** The scans of the analytics dataset, whose figures these are. */
const DATASET_SCANS = 10_000_000;
/** What outlives the raw window: tables with a row per link-day, then those with a row per link or per value. */
const PER_LINK_DAY = ["scan_link_days", "scan_day_sketches"];
const PER_LINK_OR_VALUE = ["scan_totals", "scan_values"];
const COUNTRIES = ["US", "DE", "GB", "FR", "ES", "IT", "NL", "BR", "IN", "JP", "CA", "AU", "MX", "PL", "SE", ""];
const AGENTS = [
  ["mobile", "iOS", "Mobile Safari"],
  ["mobile", "Android", "Chrome"],
  ["mobile", "Android", "Samsung Browser"],
  ["mobile", "iOS", "Instagram"],
  ["tablet", "iOS", "Mobile Safari"],
  ["desktop", "Windows", "Chrome"],
  ["desktop", "macOS", "Safari"],
] as const;
const REFERRERS = ["l.instagram.com", "t.co", "www.google.com", "lm.facebook.com"];

/** Relations of the links schema whose name starts with one of `prefixes`, partitions included, in bytes. */
async function bytesOf(db: Kysely<LinksTables>, tables: string[]): Promise<number> {
  const { rows } = await sql<{ bytes: string }>`
    SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'links' AND c.relkind = 'r' AND (c.relname = ANY(${tables}::text[])
      OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent IN (SELECT oid FROM pg_class WHERE relname = ANY(${tables}::text[]) AND relnamespace = n.oid)))`.execute(
    db,
  );
  return Number(rows[0]!.bytes);
}

const mark = (figure: number, budget: number) => `${figure.toFixed(1)} B/scan (budget ≤ ${budget})`;

/** A figure beside its target, for the benchmark's table of targets. */
export interface Target {
  figure: string;
  value: string;
  target: string;
  met: boolean;
}

/**
 * Where the bytes are: for each table (its partitions added up), its heap (tuple headers included)
 * and each index, and its rows per scan, so a budget missed shows which part to shrink.
 */
async function printRelations(db: Kysely<LinksTables>, tables: string[], scans: number): Promise<void> {
  const { rows } = await sql<{ table_name: string; relation: string; kind: string; bytes: string; tuples: string }>`
    WITH parts AS (
      SELECT parent.relname AS table_name, coalesce(child.oid, parent.oid) AS oid
      FROM pg_class AS parent
      JOIN pg_namespace AS n ON n.oid = parent.relnamespace AND n.nspname = 'links'
      LEFT JOIN pg_inherits AS inh ON inh.inhparent = parent.oid
      LEFT JOIN pg_class AS child ON child.oid = inh.inhrelid
      WHERE parent.relname = ANY(${tables}::text[])
    )
    SELECT table_name, 'heap' AS relation, 'heap' AS kind,
      sum(pg_table_size(parts.oid))::bigint AS bytes, sum(c.reltuples)::bigint AS tuples
    FROM parts JOIN pg_class AS c ON c.oid = parts.oid GROUP BY table_name
    UNION ALL
    SELECT table_name, regexp_replace(ic.relname, '_[0-9]{8}(_.*)?$|_until_[0-9]{8}.*$', '') AS relation, 'index',
      sum(pg_relation_size(ic.oid))::bigint, sum(ic.reltuples)::bigint
    FROM parts JOIN pg_index AS i ON i.indrelid = parts.oid JOIN pg_class AS ic ON ic.oid = i.indexrelid
    GROUP BY 1, 2
    ORDER BY 1, 3, 2`.execute(db);
  for (const row of rows) {
    const tuples = Math.max(0, Number(row.tuples));
    console.log(
      `    ${`${row.table_name} ${row.kind === "heap" ? "" : `index ${row.relation}`}`.padEnd(64)}` +
        `${(Number(row.bytes) / scans).toFixed(1).padStart(7)} B/scan  ${(tuples / scans).toFixed(3)} rows/scan` +
        (tuples > 0 ? `  ${(Number(row.bytes) / tuples).toFixed(1)} B/row` : ""),
    );
  }
}

/**
 * Stores `scans` scans in a scratch database `name` on `serverUrl`, prints the bytes per scan and
 * the projection; answers them as targets.
 */
export async function scanStorageBudget(
  serverUrl: string,
  databaseUrl: (name: string) => string,
  name: string,
  scans: number,
): Promise<Target[]> {
  await adminQuery(serverUrl, `drop database if exists ${name}`);
  await adminQuery(serverUrl, `create database ${name}`);
  const database = await openDatabase({ databaseUrl: databaseUrl(name), dataDir: "" });
  try {
    const days = Math.max(1, Math.round(scans / SCANS_PER_DAY));
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const first = today - (days - 1) * DAY_MS;
    await buildLinks({
      db: database.db,
      shortLinkBaseUrl: "https://s.qr.example",
      pageTokenSecret: PAGE_TOKEN_SECRET,
      scanRetentionDays: days,
    });
    const db = database.db.withSchema("links") as Kysely<LinksTables>;
    const accountId = randomUUID();
    const linkIds = Array.from({ length: LINKS }, () => randomUUID());
    await sql`INSERT INTO links.links (id, account_id, slug, destination_url, status, created_at, updated_at)
      SELECT id, ${accountId}, 'storage' || n, 'https://example.com/', 'active', now(), now()
      FROM unnest(${linkIds}::uuid[]) WITH ORDINALITY AS l (id, n)`.execute(db);
    // The hot link takes a fifth; the others fall off as n^-0.8.
    const weights = linkIds.map((_, n) => (n === 0 ? 0 : (n + 1) ** -0.8));
    const rest = weights.reduce((sum, w) => sum + w, 0);
    const counts = weights.map((w, n) => (n === 0 ? Math.round(scans * 0.2) : Math.round((scans * 0.8 * w) / rest)));
    const cumulative = counts.map(
      (
        (sum) => (count: number) =>
          (sum += count)
      )(0),
    );
    const total = cumulative.at(-1)!;
    let columns: ScanColumns = emptyScanColumns();
    const started = performance.now();
    for (let i = 0; i < total; i++) {
      const r = Math.random() * total;
      let link = 0;
      for (let lo = 0, hi = LINKS - 1; lo <= hi; ) {
        const mid = (lo + hi) >> 1;
        if (cumulative[mid]! > r) {
          link = mid;
          hi = mid - 1;
        } else lo = mid + 1;
      }
      // Scans come in time order, as they do to the service (ids and partitions grow at their end).
      const at = first + Math.floor((i / total) * days * DAY_MS);
      const agent = AGENTS[Math.floor(Math.random() ** 1.6 * AGENTS.length)]!;
      columns.id.push(timeOrderedScanId(at));
      columns.linkId.push(linkIds[link]!);
      columns.scannedAtMs.push(at);
      columns.country.push(COUNTRIES[Math.floor(Math.random() ** 2.5 * COUNTRIES.length)]!);
      columns.deviceType.push(agent[0]);
      columns.os.push(agent[1]);
      columns.browser.push(agent[2]);
      columns.referrerHost.push(Math.random() < 0.88 ? "" : REFERRERS[Math.floor(Math.random() * REFERRERS.length)]!);
      columns.visitorKey.push(
        `${link}-${Math.floor(Math.random() ** 2 * Math.max(1, counts[link]! / 6.67))}`.padEnd(22, "x"),
      );
      if (columns.id.length === BATCH) {
        await storeScans(db, columns);
        columns = emptyScanColumns();
        if (i % (BATCH * 20) === BATCH - 1) await foldScanDeltas(db);
      }
    }
    await storeScans(db, columns);
    while (((await foldScanDeltas(db)) ?? 1) > 0);
    await sql`VACUUM ANALYZE`.execute(db);
    const storedMs = performance.now() - started;
    const RAW_TABLES = ["raw_scans", "scan_contexts"];
    const raw = await bytesOf(db, RAW_TABLES);
    const perTable = async (tables: string[]) =>
      (
        await Promise.all(tables.map(async (table) => `${table} ${((await bytesOf(db, [table])) / total).toFixed(1)}`))
      ).join(", ");
    const rawTables = await perTable(RAW_TABLES);
    console.log("\nThe raw window's relations:");
    await printRelations(db, RAW_TABLES, total);
    // The hot link's hourly counts over the last 31 days, as interval=hour reads them (a warm-up, then 5 runs).
    const hourlyFrom = today + DAY_MS - 31 * DAY_MS;
    const hourly = () => hourlyScans(db, linkIds[0]!, hourlyFrom, today + DAY_MS);
    const hours = await hourly();
    const hourlyScansRead = hours.reduce((sum, hour) => sum + hour.scans, 0);
    const hourlyMs: number[] = [];
    for (let run = 0; run < 5; run++) {
      const started = performance.now();
      await hourly();
      hourlyMs.push(performance.now() - started);
    }
    hourlyMs.sort((a, b) => a - b);
    // Each day past the retention in turn, as the partition manager closes them: its raw window goes,
    // its visitors become sketches in its rows (a new version of each), and a vacuum frees the old
    // versions for the next days' rows.
    for (let day = 0; day < days; day++) {
      await maintainScanPartitions(db, 1, new Date(first + (day + 2) * DAY_MS));
      await sql`VACUUM links.scan_link_days`.execute(db);
    }
    await sql`VACUUM ANALYZE`.execute(db);
    const perLinkDay = await bytesOf(db, PER_LINK_DAY);
    const perLinkOrValue = await bytesOf(db, PER_LINK_OR_VALUE);
    const keptTables = [
      await perTable(PER_LINK_DAY),
      ...(await Promise.all(
        PER_LINK_OR_VALUE.map(async (table) => `${table} ${((await bytesOf(db, [table])) / DATASET_SCANS).toFixed(2)}`),
      )),
    ].join(", ");
    console.log("What outlives the window, by relation (per scan stored here):");
    await printRelations(db, [...PER_LINK_DAY, ...PER_LINK_OR_VALUE], total);
    const rawPerScan = raw / total;
    const keptPerScan = perLinkDay / total + perLinkOrValue / DATASET_SCANS;
    const perDay = 100e6;
    console.log(
      `\nStorage per scan, ${total.toLocaleString("en")} scans over ${days} days and ${LINKS} links through storeScans (${(storedMs / 1000).toFixed(0)} s):`,
    );
    console.log(`  raw window (raw_scans + scan_contexts, tables and indexes): ${mark(rawPerScan, RAW_BUDGET)}`);
    console.log(`    by table: ${rawTables}`);
    console.log(
      `  rollups and sketches (what outlives the window), at 10 million scans: ${mark(keptPerScan, ROLLUP_BUDGET)}`,
    );
    console.log(
      `    by table: ${keptTables} (scan_totals and scan_values divided by 10 million scans: ${(perLinkOrValue / total).toFixed(1)} B/scan over the ${total.toLocaleString("en")} stored)`,
    );
    const tb = (bytes: number) => `${(bytes / 1e12).toFixed(2)} TB`;
    console.log(
      `  at 100 million scans a day, ${SCAN_RETENTION_DAYS} days kept: raw window ${tb(rawPerScan * perDay * SCAN_RETENTION_DAYS)}, ` +
        `rollups and sketches ${tb(keptPerScan * perDay * 365)} a year (at this dataset's scans per link and day; more per link cost less)`,
    );
    console.log(
      `  hourly counts of the hot link, 31 days (${hourlyScansRead.toLocaleString("en")} scans): ` +
        `median ${hourlyMs[2]!.toFixed(1)} ms of 5 runs`,
    );
    return [
      {
        figure: "raw window bytes per stored scan",
        value: rawPerScan.toFixed(1),
        target: `≤ ${RAW_BUDGET}`,
        met: rawPerScan <= RAW_BUDGET,
      },
      {
        figure: "rollup and sketch bytes per stored scan",
        value: keptPerScan.toFixed(1),
        target: `≤ ${ROLLUP_BUDGET}`,
        met: keptPerScan <= ROLLUP_BUDGET,
      },
    ];
  } finally {
    await database.close();
    await adminQuery(serverUrl, `drop database if exists ${name}`);
  }
}
