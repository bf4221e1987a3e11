import { create } from "@bufbuild/protobuf";
import { z } from "zod";
import {
  GetLinkAnalyticsResponseSchema,
  GetScanTotalsResponseSchema,
  RecordScansResponseSchema,
  RuleScansSchema,
  type BreakdownEntry,
  type GetLinkAnalyticsRequest,
  type GetLinkAnalyticsResponse,
  type GetScanTotalsRequest,
  type GetScanTotalsResponse,
  type RecordScansRequest,
  type RecordScansResponse,
  type RuleScans,
} from "@qrplatform/api/links";
import { invalidArgument, isUuid, notFound, validate } from "@qrplatform/platform";
import type { LinksDeps } from "../../deps.js";
import { analyticsRangeRequest, dayString, hourlyAvailableFrom, hourlyWindowProblem } from "./analytics-range.js";
import { rangeVisitors } from "./range-visitors.js";
import { firstKeptDay } from "./scan-partitions.js";
import { scanColumnsOf, type ScanColumns } from "../scan-columns.js";
import type { Dimension } from "./scan-dimensions.js";
import { hourlyScans, isAccountLink, scanTotals, summarizeScans } from "./scans.repository.js";

/** Breakdown values listed one by one; the rest are summed into one "other" entry. */
const MAX_BREAKDOWN_VALUES = 50;

/**
 * Stores a batch of scans from a redirector. Each scan is stored once whatever the retries; a scan of
 * a link that does not exist (purged after the scan) is dropped. The owning account is read from the
 * link, never taken from the caller. A batch that stored anything announces its links (their totals
 * grew); folding moves scans between tables without changing a total, so it announces nothing.
 */
export async function recordScans(deps: LinksDeps, req: RecordScansRequest): Promise<RecordScansResponse> {
  const recordedCount = await storeCheckedScans(deps, scanColumnsOf(req.scans));
  return create(RecordScansResponseSchema, { recordedCount });
}

/**
 * Stores a batch whose scans keep the scan rules (checked by scanColumnsOf for RecordScans; made so
 * by classifying for a scan recorder of this process) and announces its links; answers how many of
 * its scans were new.
 */
export async function storeCheckedScans(deps: LinksDeps, columns: ScanColumns): Promise<number> {
  const recordedCount = await deps.scanSink.store(columns);
  // Before the answer, so a read after it finds no catalog holding the totals from before.
  await announceStoredScans(deps, recordedCount > 0 ? columns.linkId : []);
  return recordedCount;
}

/**
 * What follows a stored batch, wherever it was stored (RecordScans, or the recording thread): the links
 * whose totals grew are announced, and the batch's deltas are folded soon.
 */
export async function announceStoredScans(
  deps: Pick<LinksDeps, "scanChanges" | "scanDeltas">,
  linkIds: readonly string[],
): Promise<void> {
  if (linkIds.length > 0) await deps.scanChanges.publish({ linkIds: [...new Set(linkIds)] });
  deps.scanDeltas.foldSoon();
}

const getScanTotalsRequest = z.object({
  linkIds: z.array(z.string()).refine((ids) => ids.length <= 100, {
    message: "at most 100 link ids per request",
    params: { reason: "too_many" },
  }),
});

/** All-time scans of up to 100 of the account's links. */
export async function getScanTotals(deps: LinksDeps, req: GetScanTotalsRequest): Promise<GetScanTotalsResponse> {
  validate(getScanTotalsRequest, req);
  const ids = req.linkIds.filter(isUuid);
  const totals = isUuid(req.accountId) ? await scanTotals(deps.db, req.accountId, ids) : new Map<string, number>();
  return create(GetScanTotalsResponseSchema, {
    totals: Object.fromEntries([...totals].map(([linkId, scans]) => [linkId, BigInt(scans)])),
  });
}

/** What an empty value means in each breakdown listed by value. */
const EMPTY_VALUE: Record<Exclude<Dimension, "rule">, string> = {
  country: "unknown",
  device: "unknown",
  os: "unknown",
  browser: "unknown",
  referrer: "direct",
};

const HOUR_MS = 3_600_000;
const HOURS_A_DAY = 24;

/**
 * One link's scans over a range of UTC days: totals, a zero-filled daily series, breakdowns, and on
 * request a zero-filled hourly series counted from the raw scans.
 */
export async function getLinkAnalytics(
  deps: LinksDeps,
  req: GetLinkAnalyticsRequest,
): Promise<GetLinkAnalyticsResponse> {
  const range = validate(analyticsRangeRequest, {
    fromDate: req.fromDate,
    toDate: req.toDate,
    interval: req.interval,
    now: deps.now(),
  });
  if (!isUuid(req.accountId) || !isUuid(req.linkId)) throw notFound("link");
  const { linkId } = req;
  if (!(await isAccountLink(deps.db, req.accountId, linkId))) throw notFound("link");
  // Every answer names the first day of the raw window, which distinct visitors also read.
  const keptFrom = await firstKeptDay(deps.db);
  const hourlyFrom = hourlyAvailableFrom(keptFrom);
  const beforeWindow = hourlyWindowProblem(range, hourlyFrom);
  if (beforeWindow) throw invalidArgument([beforeWindow]);

  const [from, to] = [dayString(range.first), dayString(range.last)];
  const summarizing = summarizeScans(deps.db, linkId, from, to);
  const days = { from, to, today: deps.now().toISOString().slice(0, 10), keptFrom };
  const [firstHour, endHour] = [range.first * HOURS_A_DAY, (range.last + 1) * HOURS_A_DAY];
  const [summary, uniqueScans, hours] = await Promise.all([
    summarizing,
    rangeVisitors(deps, linkId, days, async () => (await summarizing).daily),
    range.hourly ? hourlyScans(deps.db, linkId, firstHour * HOUR_MS, endHour * HOUR_MS) : [],
  ]);
  const byHour = new Map(hours.map((row) => [row.hour, row]));
  const hourly = [];
  if (range.hourly) {
    for (let hour = firstHour; hour < endHour; hour++) {
      const row = byHour.get(hour);
      hourly.push({
        hour: new Date(hour * HOUR_MS).toISOString().replace(".000Z", "Z"),
        scans: BigInt(row?.scans ?? 0),
        uniqueScans: BigInt(row?.visitors ?? 0),
      });
    }
  }
  const byDay = new Map(summary.daily.map((row) => [row.day, row]));
  const daily = [];
  for (let day = range.first; day <= range.last; day++) {
    const row = byDay.get(dayString(day));
    daily.push({ date: dayString(day), scans: BigInt(row?.scans ?? 0), uniqueScans: BigInt(row?.uniqueScans ?? 0) });
  }
  const breakdown = (dimension: Exclude<Dimension, "rule">) =>
    topValues(
      summary.breakdowns
        .filter((row) => row.dimension === dimension)
        .map((row) => ({ value: row.value || EMPTY_VALUE[dimension], scans: row.scans })),
    );
  const totalScans = summary.daily.reduce((sum, row) => sum + row.scans, 0);
  return create(GetLinkAnalyticsResponseSchema, {
    totalScans: BigInt(totalScans),
    uniqueScans: BigInt(uniqueScans),
    daily,
    countries: breakdown("country"),
    devices: breakdown("device"),
    operatingSystems: breakdown("os"),
    browsers: breakdown("browser"),
    referrers: breakdown("referrer"),
    rules: ruleScans(
      summary.breakdowns.filter((row) => row.dimension === "rule"),
      totalScans,
    ),
    hourly,
    hourlyAvailableFrom: hourlyFrom,
  });
}

/**
 * Scans per rule from the `rule` breakdown (a rule's id, or "<rule id>/<variant>" per variant of a
 * split rule), most first, ties by rule id; the scans no rule decided are the rest of the range's
 * total, the entry with an empty rule id, listed when there are any. Every rule that decided a scan is
 * listed, so that the entries add up to the total: a code holds at most 50 rules, and the rules it
 * held before stay few.
 */
function ruleScans(values: { value: string; scans: number }[], totalScans: number): RuleScans[] {
  const rules = new Map<string, { scans: number; variants: Map<number, number> }>();
  for (const { value, scans } of values) {
    const slash = value.indexOf("/");
    const ruleId = slash < 0 ? value : value.slice(0, slash);
    let rule = rules.get(ruleId);
    if (rule === undefined) {
      rule = { scans: 0, variants: new Map() };
      rules.set(ruleId, rule);
    }
    rule.scans += scans;
    if (slash >= 0) {
      const variant = Number(value.slice(slash + 1));
      rule.variants.set(variant, (rule.variants.get(variant) ?? 0) + scans);
    }
  }
  const decided = [...rules.values()].reduce((sum, rule) => sum + rule.scans, 0);
  const entries = [...rules].map(([ruleId, rule]) =>
    create(RuleScansSchema, {
      ruleId,
      scans: BigInt(rule.scans),
      variants: [...rule.variants]
        .sort(([a], [b]) => a - b)
        .map(([variant, scans]) => ({ variant, scans: BigInt(scans) })),
    }),
  );
  if (totalScans > decided) entries.push(create(RuleScansSchema, { ruleId: "", scans: BigInt(totalScans - decided) }));
  return entries.sort(
    (a, b) => Number(b.scans - a.scans) || (a.ruleId === "" ? 1 : b.ruleId === "" ? -1 : a.ruleId < b.ruleId ? -1 : 1),
  );
}

/** Values most scanned first (ties by value, so the order is stable); past the cap, one "other" entry. */
function topValues(entries: { value: string; scans: number }[]): Pick<BreakdownEntry, "value" | "scans">[] {
  const sorted = entries.sort((a, b) => b.scans - a.scans || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  const shown = sorted.slice(0, MAX_BREAKDOWN_VALUES).map(({ value, scans }) => ({ value, scans: BigInt(scans) }));
  const rest = sorted.slice(MAX_BREAKDOWN_VALUES).reduce((sum, entry) => sum + entry.scans, 0);
  return rest > 0 ? [...shown, { value: "other", scans: BigInt(rest) }] : shown;
}
