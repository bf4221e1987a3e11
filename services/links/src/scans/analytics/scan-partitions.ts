import { sql, type Kysely, type Transaction } from "kysely";
import type { LinksTables } from "../../tables.js";
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
 * The tables partitioned by day and how a day's bound is written: links.scan_events by its UUIDv7 ids
 * (a day runs from the smallest id of its first millisecond), scan_visitor_days by date. links.scans
 * and links.scan_day_visitors, the shape before 20270120T1000_narrow_scans, get no new partitions from
 * this version and lose their old ones as the retention passes; `visitor` is the SQL of a visitor's
 * 64-bit hash in each table of visitor-days.
 */
const PARTITIONED = [
  { table: "scan_events", bound: "uuid", grows: true, visitor: "" },
  { table: "scan_visitor_days", bound: "date", grows: true, visitor: "visitor" },
  { table: "scans", bound: "time", grows: false, visitor: "" },
  { table: "scan_day_visitors", bound: "date", grows: false, visitor: "hashtextextended(visitor_key, 0)" },
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
 * Makes the daily partitions of links.scan_events and links.scan_visitor_days from the first kept day to
 * DAYS_AHEAD days after today, drops those wholly before the first kept day (today less the
 * retention, at least MIN_KEPT_DAYS), and records the window in links.scan_window, all in one
 * transaction. Before a day's visitors go, each link's sketch of that day is built from them, so
 * distinct visitors over old days still come from sketches. Returns undefined when another instance
 * holds the lock (it does the same work).
 */
export async function maintainScanPartitions(
  db: Db,
  retentionDays: number,
  now: Date,
): Promise<PartitionRun | undefined> {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const keptFrom = today - Math.max(retentionDays, MIN_KEPT_DAYS) * DAY_MS;
  const until = today + (DAYS_AHEAD + 1) * DAY_MS;
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
    for (const { visitor, partitions } of tables) {
      if (visitor === "") continue;
      for (const partition of partitions) {
        if (partition.toMs <= keptFrom) await sketchDaysOf(trx, partition.name, visitor);
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
        const bound = (ms: number) => sql.lit(kind === "uuid" ? firstScanIdAt(ms) : dayText(ms));
        await sql`CREATE TABLE ${sql.raw(`links.${name}`)} PARTITION OF ${sql.raw(`links.${table}`)}
          FOR VALUES FROM (${bound(day)}) TO (${bound(day + DAY_MS)})`.execute(trx);
        run.created.push(name);
      }
    }
    // Scans before the end of the old tables' partitions are looked up there too, while they hold any.
    const legacy = tables.filter((spec) => !spec.grows).flatMap((spec) => spec.partitions);
    const { rows: held } = await sql<{ held: boolean }>`
      SELECT EXISTS (SELECT 1 FROM links.scans) OR EXISTS (SELECT 1 FROM links.scan_day_visitors) AS held`.execute(trx);
    const legacyEnd = legacy.filter((partition) => partition.toMs > keptFrom).map((partition) => partition.toMs);
    const legacyUntil =
      held[0]!.held && legacyEnd.length > 0 ? new Date(Math.max(...legacyEnd)).toISOString() : "-infinity";
    await sql`UPDATE links.scan_window SET kept_from = ${new Date(keptFrom).toISOString()}, until = ${new Date(until).toISOString()},
      legacy_until = ${legacyUntil}::timestamptz`.execute(trx);
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
  // A UUIDv7: its first 48 bits are milliseconds.
  const uuid = /^'([0-9a-f]{8})-([0-9a-f]{4})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'$/.exec(value);
  if (uuid) return Number.parseInt(uuid[1]! + uuid[2]!, 16);
  // '2026-11-29' or '2026-11-29 00:00:00+00'
  const text = value.replaceAll("'", "").replace(" ", "T").replace(/\+00$/, "Z");
  return Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text);
}

/** The smallest UUIDv7 of a millisecond: the bound of links.scan_events' partition that starts then. */
export function firstScanIdAt(ms: number): string {
  const hex = ms.toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

/**
 * Stores the sketch of every link and day in a partition of visitor-days about to be dropped, with
 * the day's distinct visitors as the rollups count them (folded or not), so a range reaching those
 * days merges sketches, as it does for any range too large to count exactly.
 */
async function sketchDaysOf(trx: Transaction<LinksTables>, partition: string, visitor: string): Promise<void> {
  const { rows } = await sql<{ link_id: string; day: string; register: number; bits: number }>`
    SELECT link_id, to_char(day, 'YYYY-MM-DD') AS day, ${sql.raw(REGISTER_SQL)} AS register, min(${sql.raw(RANK_BITS_SQL)}) AS bits
    FROM (SELECT link_id, day, ${sql.raw(visitor)} AS visitor FROM ${sql.raw(`links.${partition}`)}) AS visitors GROUP BY 1, 2, 3`.execute(
    trx,
  );
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
  const visitorTables = PARTITIONED.filter((spec) => spec.visitor !== "").map((spec) => spec.table);
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
