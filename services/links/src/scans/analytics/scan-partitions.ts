import { sql, type Kysely, type Transaction } from "kysely";
import type { LinksTables } from "../../tables.js";
import { DAY_KEYS, firstKeyAt, firstScanIdAt } from "./scan-keys.js";
import { dayUniqueScans, saveLinkDaySketches } from "./scans.repository.js";
import { addToSketch, emptySketch, RANK_BITS_SQL, rankOf, REGISTER_SQL } from "./visitor-sketch.js";

type Db = Kysely<LinksTables>;

/** Days of partitions made ahead of today: scans keep a home while the manager cannot run for that long. */
export const DAYS_AHEAD = 3;
/**
 * The fewest whole days before today whose raw scans are kept, whatever SCAN_RETENTION_DAYS says: a
 * batch sent again within that time (a retry, a spool replayed after an outage) is still recognised.
 */
export const MIN_KEPT_DAYS = 1;
/** How often the manager runs after its first run. */
const RUN_EVERY_MS = 3_600_000;
/** Any number that is ours alone: one manager at a time across every links instance. */
const PARTITION_LOCK = 0x71720002;
const DAY_MS = 86_400_000;

/**
 * The tables partitioned by day and how a day's bound is written: links.raw_scans by its keys (a
 * day runs from its first millisecond × 2^20), links.scan_events by its UUIDv7 ids (from the
 * smallest id of its first millisecond), the others by date or time. Only links.raw_scans gets new
 * partitions; the others, the shapes before 20270310T1100_raw_scans and 20270120T1000_narrow_scans,
 * lose their old ones as the retention passes. `visitors` is the SQL of a partition's rows as
 * (link_id, day, visitor), the visitor as its 64-bit hash, for the tables that tell visitors' days.
 */
const PARTITIONED = [
  {
    table: "raw_scans",
    bound: "key",
    grows: true,
    visitors: (partition: string) =>
      `SELECT link.id AS link_id, date '1970-01-01' + ((raw.key >> 20) / 86400000)::int AS day, raw.visitor
      FROM links.${partition} AS raw JOIN links.links AS link ON link.number = raw.link`,
  },
  { table: "scan_events", bound: "uuid", grows: false, visitors: undefined },
  {
    table: "scan_visitor_days",
    bound: "date",
    grows: false,
    visitors: (partition: string) => `SELECT link_id, day, visitor FROM links.${partition}`,
  },
  { table: "scans", bound: "time", grows: false, visitors: undefined },
  {
    table: "scan_day_visitors",
    bound: "date",
    grows: false,
    visitors: (partition: string) =>
      `SELECT link_id, day, hashtextextended(visitor_key, 0) AS visitor FROM links.${partition}`,
  },
] as const;

/** What one run did: the partitions it made and dropped, by name. */
export interface PartitionRun {
  created: string[];
  dropped: string[];
  /** The first day whose raw scans are kept, "YYYY-MM-DD". */
  keptFrom: string;
}

const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Makes the daily partitions of links.raw_scans from the first kept day to DAYS_AHEAD days after
 * today, drops those (of it and of the tables before it) wholly before the first kept day (today
 * less the retention, at least MIN_KEPT_DAYS), and records the window in links.scan_window, all in
 * one transaction. Each day that is over is closed first, in a transaction of its own, and its
 * distinct visitors then counted from the raw scans (closeDaysBefore, recountClosedDays). Before a
 * day's visitors go, each link's sketch of that day is built from them, so distinct visitors over old
 * days still come from sketches. Returns undefined when another instance holds the lock (it does the
 * same work).
 */
export async function maintainScanPartitions(
  db: Db,
  retentionDays: number,
  now: Date,
): Promise<PartitionRun | undefined> {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const keptFrom = today - Math.max(retentionDays, MIN_KEPT_DAYS) * DAY_MS;
  const until = today + (DAYS_AHEAD + 1) * DAY_MS;
  if (!(await closeDaysBefore(db, today))) return undefined;
  return db.transaction().execute(async (trx) => {
    const { rows: locked } = await sql<{
      locked: boolean;
    }>`SELECT pg_try_advisory_xact_lock(${PARTITION_LOCK}) AS locked`.execute(trx);
    if (!locked[0]!.locked) return undefined;
    // Bounds are printed in the session's time zone: UTC makes them plain to read back.
    await sql`SET LOCAL TimeZone = 'UTC'`.execute(trx);
    // A partition made or dropped locks its whole table until commit: the sketches, the slow part,
    // are built first, and a run that cannot have its locks soon gives up until the next.
    await sql`SET LOCAL lock_timeout = '5s'`.execute(trx);
    const run: PartitionRun = { created: [], dropped: [], keptFrom: dayText(keptFrom) };
    const tables = await Promise.all(
      PARTITIONED.map(async (spec) => ({ ...spec, partitions: await partitionsOf(trx, spec.table) })),
    );
    await recountClosedDays(trx);
    for (const { visitors, partitions } of tables) {
      if (visitors === undefined) continue;
      for (const partition of partitions) {
        if (partition.toMs <= keptFrom) await sketchDaysOf(trx, visitors(partition.name));
      }
    }
    for (const { table, bound: kind, grows, partitions } of tables) {
      for (const partition of partitions) {
        if (partition.toMs > keptFrom) continue;
        await sql`DROP TABLE ${sql.raw(`links.${partition.name}`)}`.execute(trx);
        run.dropped.push(partition.name);
      }
      if (!grows) continue;
      const covered = partitions.filter((partition) => partition.toMs > keptFrom);
      for (let day = keptFrom; day < until; day += DAY_MS) {
        if (covered.some((partition) => partition.fromMs < day + DAY_MS && partition.toMs > day)) continue;
        const name = `${table}_${dayText(day).replaceAll("-", "")}`;
        const bound = (ms: number) =>
          sql.lit(kind === "key" ? firstKeyAt(ms) : kind === "uuid" ? firstScanIdAt(ms) : dayText(ms));
        await sql`CREATE TABLE ${sql.raw(`links.${name}`)} PARTITION OF ${sql.raw(`links.${table}`)}
          FOR VALUES FROM (${bound(day)}) TO (${bound(day + DAY_MS)})`.execute(trx);
        run.created.push(name);
      }
    }
    // Scans before the end of the old tables' partitions are looked up there too, while they hold any.
    const lookedUpUntil = (names: string[], held: boolean) => {
      const ends = tables
        .filter((spec) => (names as string[]).includes(spec.table))
        .flatMap((spec) => spec.partitions)
        .filter((partition) => partition.toMs > keptFrom)
        .map((partition) => partition.toMs);
      return held && ends.length > 0 ? new Date(Math.max(...ends)).toISOString() : "-infinity";
    };
    const { rows: held } = await sql<{ wide: boolean; narrow: boolean }>`
      SELECT EXISTS (SELECT 1 FROM links.scans) OR EXISTS (SELECT 1 FROM links.scan_day_visitors) AS wide,
        EXISTS (SELECT 1 FROM links.scan_events) OR EXISTS (SELECT 1 FROM links.scan_visitor_days) AS narrow`.execute(
      trx,
    );
    await sql`UPDATE links.scan_window SET kept_from = ${new Date(keptFrom).toISOString()}, until = ${new Date(until).toISOString()},
      legacy_until = ${lookedUpUntil(["scans", "scan_day_visitors"], held[0]!.wide)}::timestamptz,
      narrow_until = ${lookedUpUntil(["scan_events", "scan_visitor_days"], held[0]!.narrow)}::timestamptz`.execute(trx);
    return run;
  });
}

/** The partitions of a table, with the times they cover, [fromMs, toMs); MINVALUE reads as -Infinity. */
async function partitionsOf(trx: Db, table: string): Promise<{ name: string; fromMs: number; toMs: number }[]> {
  const { rows } = await sql<{ name: string; bound: string }>`
    SELECT child.relname AS name, pg_get_expr(child.relpartbound, child.oid) AS bound
    FROM pg_inherits JOIN pg_class AS child ON child.oid = pg_inherits.inhrelid
    WHERE pg_inherits.inhparent = ${`links.${table}`}::regclass`.execute(trx);
  return rows.map(({ name, bound }) => {
    const [, from, to] = /FROM \((.+)\) TO \((.+)\)/.exec(bound) ?? [];
    return { name, fromMs: boundMs(from), toMs: boundMs(to) };
  });
}

function boundMs(value: string | undefined): number {
  if (value === undefined || value === "MINVALUE") return Number.NEGATIVE_INFINITY;
  if (value === "MAXVALUE") return Number.POSITIVE_INFINITY;
  // A key of links.raw_scans: milliseconds × 2^20.
  const key = /^'(-?[0-9]+)'$/.exec(value);
  if (key) return Number(BigInt(key[1]!) >> 20n);
  // A UUIDv7: its first 48 bits are milliseconds.
  const uuid = /^'([0-9a-f]{8})-([0-9a-f]{4})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'$/.exec(value);
  if (uuid) return Number.parseInt(uuid[1]! + uuid[2]!, 16);
  // '2026-11-29' or '2026-11-29 00:00:00+00'
  const text = value.replaceAll("'", "").replace(" ", "T").replace(/\+00$/, "Z");
  return Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text);
}

/**
 * Closes the days before `today`: from then on writers count the distinct visitors of their late
 * scans (scan-store.ts), and the next transaction counts everyone else's (recountClosedDays). Its own
 * short transaction: moving links.scan_day_close.closed_until waits for every batch that read it (FOR
 * SHARE) and so may be counting none of its day's visitors, and a batch that starts meanwhile waits
 * for this commit and then reads the new bound; the recount, which may read a whole day's scans, then
 * sees every scan stored uncounted and holds up no writer. Answers false when another instance holds
 * the partition lock (it does the same work).
 */
async function closeDaysBefore(db: Db, today: number): Promise<boolean> {
  try {
    return await db.transaction().execute(async (trx) => {
      const { rows: locked } = await sql<{
        locked: boolean;
      }>`SELECT pg_try_advisory_xact_lock(${PARTITION_LOCK}) AS locked`.execute(trx);
      if (!locked[0]!.locked) return false;
      // Each batch holds the row for milliseconds; should batches never leave it free, the days close
      // at a later run rather than hold up this one's partitions.
      await sql`SET LOCAL lock_timeout = ${sql.lit(CLOSE_LOCK_TIMEOUT)}`.execute(trx);
      await sql`UPDATE links.scan_day_close SET closed_until = ${dayText(today)}::date
        WHERE closed_until < ${dayText(today)}::date`.execute(trx);
      return true;
    });
  } catch (error) {
    if (isLockTimeout(error)) return true;
    throw error;
  }
}

/** How long closing days waits for the batches that hold links.scan_day_close. */
export const CLOSE_LOCK_TIMEOUT = "5s";

const isLockTimeout = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error && error.code === "55P03";

/**
 * Counts the distinct visitors of each link on every closed day not counted yet (from
 * links.scan_window.recounted_until to links.scan_day_close.closed_until) from the raw scans (and the visitor-days before
 * 20270310T1100_raw_scans), and where the rollups and the deltas not folded yet count otherwise (writers
 * count none for a day that is open, and the version before counted its own), adds a delta of no
 * scans and the difference in visitors, which the fold adds to the day's unique scans; then records
 * the days as recounted. They are not read again: a scan arriving late for one is counted by its
 * writer. Days whose raw scans are gone (past the retention) have nothing to recount and are left as
 * counted.
 */
async function recountClosedDays(trx: Transaction<LinksTables>): Promise<void> {
  const { rows } = await sql<{ from: string | null; to: string | null }>`
    SELECT to_char(recounted_until, 'YYYY-MM-DD') AS from,
      (SELECT to_char(closed_until, 'YYYY-MM-DD') FROM links.scan_day_close) AS to
    FROM links.scan_window`.execute(trx);
  const from = rows[0]?.from;
  const to = rows[0]?.to;
  if (from === null || from === undefined || to === null || to === undefined || from >= to) return;
  const toMs = Date.parse(`${to}T00:00:00Z`);
  const fromMs = Date.parse(`${from}T00:00:00Z`);
  await sql`
    WITH exact AS (
      SELECT link_id, day, count(DISTINCT visitor) AS visitors FROM (
        SELECT link.id AS link_id, date '1970-01-01' + ((raw.key >> 20) / 86400000)::int AS day, raw.visitor
        FROM links.raw_scans AS raw JOIN links.links AS link ON link.number = raw.link
        WHERE raw.key >= ${firstKeyAt(fromMs)}::int8 AND raw.key < ${firstKeyAt(toMs)}::int8
        UNION ALL
        SELECT link_id, day, visitor FROM links.scan_visitor_days WHERE day >= ${from}::date AND day < ${to}::date
        UNION ALL
        SELECT link_id, day, hashtextextended(visitor_key, 0) FROM links.scan_day_visitors
        WHERE day >= ${from}::date AND day < ${to}::date
      ) AS seen
      GROUP BY 1, 2
    ),
    counted AS (
      SELECT link_id, day, sum(n) AS visitors FROM (
        SELECT link_id, day, links.scan_day_unique_scans(counts) AS n FROM links.scan_link_days
        WHERE day >= ${from}::date AND day < ${to}::date
        UNION ALL
        SELECT link_id, day, visitors FROM links.scan_deltas WHERE day >= ${from}::date AND day < ${to}::date
      ) AS counts
      GROUP BY 1, 2
    )
    -- The delta takes the values of one of the day's scans, which its breakdowns already hold: adding
    -- no scans to them, it adds no value of no scans to them either.
    INSERT INTO links.scan_deltas (link_id, account_id, day, country, device_type, os, browser, referrer_host, rule, scans, visitors)
    SELECT exact.link_id, link.account_id, exact.day, coalesce(seen.country, ''), coalesce(seen.device_type, ''),
      coalesce(seen.os, ''), coalesce(seen.browser, ''), coalesce(seen.referrer_host, ''), '', 0, exact.visitors - counted.visitors
    FROM exact JOIN counted USING (link_id, day) JOIN links.links AS link ON link.id = exact.link_id
    LEFT JOIN LATERAL (
      SELECT context.country, context.device_type, context.os, context.browser, context.referrer_host
      FROM links.raw_scans AS raw JOIN links.scan_contexts AS context ON context.code = raw.context
      WHERE raw.link = link.number AND raw.key >= (exact.day - date '1970-01-01')::bigint * ${DAY_KEYS}
        AND raw.key < (exact.day - date '1970-01-01' + 1)::bigint * ${DAY_KEYS}
      LIMIT 1
    ) AS seen ON true
    WHERE exact.visitors <> counted.visitors`.execute(trx);
  await sql`UPDATE links.scan_window SET recounted_until = ${to}::date`.execute(trx);
}

/**
 * Stores the sketch of every link and day in a partition of visitor-days about to be dropped, with
 * the day's distinct visitors as the rollups count them (folded or not), so a range reaching those
 * days merges sketches, as it does for any range too large to count exactly.
 */
async function sketchDaysOf(trx: Transaction<LinksTables>, visitors: string): Promise<void> {
  const { rows } = await sql<{ link_id: string; day: string; register: number; bits: number }>`
    SELECT link_id, to_char(day, 'YYYY-MM-DD') AS day, ${sql.raw(REGISTER_SQL)} AS register, min(${sql.raw(RANK_BITS_SQL)}) AS bits
    FROM (${sql.raw(visitors)}) AS visitors GROUP BY 1, 2, 3`.execute(trx);
  const sketches = new Map<string, { linkId: string; day: string; registers: Uint8Array }>();
  for (const { link_id, day, register, bits } of rows) {
    const key = `${link_id}/${day}`;
    let sketch = sketches.get(key);
    if (!sketch) {
      sketch = { linkId: link_id, day, registers: emptySketch() };
      sketches.set(key, sketch);
    }
    addToSketch(sketch.registers, register, rankOf(Number(bits)));
  }
  const all = [...sketches.values()];
  for (let start = 0; start < all.length; start += 1000) {
    const chunk = all.slice(start, start + 1000);
    const visitors = await dayUniqueScans(trx, chunk);
    await saveLinkDaySketches(
      trx,
      chunk.map((sketch) => ({ ...sketch, visitors: visitors.get(`${sketch.linkId}/${sketch.day}`) ?? 0 })),
    );
  }
}

/**
 * The first day whose visitors are still kept, "YYYY-MM-DD": the start of the oldest partition of
 * visitor-days left. Days before it are sketches only. It can be earlier than the window's first day:
 * a partition goes only once all of it is past the retention, and until then its days are read whole.
 */
export async function firstKeptDay(db: Db): Promise<string> {
  const visitorTables = PARTITIONED.filter((spec) => spec.visitors !== undefined).map((spec) => spec.table);
  const starts = (await Promise.all(visitorTables.map((table) => partitionsOf(db, table))))
    .flat()
    .map((partition) => partition.fromMs);
  if (starts.length > 0) {
    const first = Math.min(...starts);
    return first === Number.NEGATIVE_INFINITY ? "0001-01-01" : dayText(first);
  }
  const { rows } = await sql<{ day: string | null }>`
    SELECT CASE WHEN kept_from = '-infinity' THEN NULL ELSE to_char(kept_from AT TIME ZONE 'UTC', 'YYYY-MM-DD') END AS day
    FROM links.scan_window`.execute(db);
  return rows[0]?.day ?? "0001-01-01";
}

/**
 * Runs maintainScanPartitions now and every hour after (so a new day always has its partitions
 * DAYS_AHEAD days before it comes), on the clock it is given. A failed run (the database away) is
 * tried again at the next. Its timer never keeps a process alive.
 */
export class ScanPartitionManager {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly retentionDays: number,
    private readonly now: () => Date,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** Runs once and schedules the next runs. */
  async start(): Promise<PartitionRun | undefined> {
    const run = await this.runNow();
    this.timer ??= setInterval(() => void this.runNow().catch(this.onError), RUN_EVERY_MS);
    this.timer.unref();
    return run;
  }

  runNow(): Promise<PartitionRun | undefined> {
    const run = maintainScanPartitions(this.db, this.retentionDays, this.now());
    this.running = run.catch(() => {});
    return run;
  }

  /** Schedules no more runs and resolves once the one in progress (if any) has ended. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
